// robust: yes
// race: no
// options: -O3
// reason: a 1024-element plain array filled by a loop that -O3 vectorises, published with a release store; the reader's acquire load reads it before its own (vectorised) summing loop; every plain access is hb-ordered
// Vectorised plain loops on both sides of a release/acquire handoff, built at -O3.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define N 1024
static float samples[N];
static atomic_int published;

static void *producer(void *arg) {
  (void)arg;
  for (int i = 0; i < N; i++) samples[i] = (float)i * 0.5f;
  atomic_store_explicit(&published, 1, memory_order_release);
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&published, memory_order_acquire)) {
  }
  float sum = 0;
  for (int i = 0; i < N; i++) sum += samples[i];
  printf("%.1f\n", sum);
  return NULL;
}

int main(void) {
  pthread_t p, c;
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&p, NULL, producer, NULL);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  return 0;
}

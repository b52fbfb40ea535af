// robust: yes
// race: no
// options: -O3
// reason: four threads each add into an array of relaxed atomic counters in an unrolled -O3 loop (RMWs only, each counter one location: always SC); main reads them after the joins
// Per-bucket relaxed fetch_add counters hammered by four threads, built at -O3.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define B 16
static atomic_long buckets[B];

static void *work(void *arg) {
  long id = (long)arg;
  for (int i = 0; i < 64; i++) atomic_fetch_add_explicit(&buckets[(i * 7 + id) % B], i, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t t[4];
  for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, work, (void *)i);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  long s = 0;
  for (int i = 0; i < B; i++) s += atomic_load_explicit(&buckets[i], memory_order_relaxed);
  printf("%ld\n", s);
  return 0;
}

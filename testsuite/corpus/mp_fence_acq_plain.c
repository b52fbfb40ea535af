// robust: yes
// race: no
// reason: release store to y, relaxed load then acquire fence: the fence synchronises with the release store it read, so the plain payload read is ordered
// MP: the reader uses a relaxed spin load and an acquire fence; plain (non-atomic) payload.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static int payload[3];
static atomic_int ready;

static void *writer(void *arg) {
  (void)arg;
  payload[0] = 1;
  payload[1] = 2;
  payload[2] = 3;
  atomic_store_explicit(&ready, 1, memory_order_release);
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&ready, memory_order_relaxed))
    ;
  atomic_thread_fence(memory_order_acquire);
  return (void *)(long)(payload[0] + payload[1] + payload[2]);
}

int main(void) {
  pthread_t a, b;
  void *sum;
  pthread_create(&a, NULL, writer, NULL);
  pthread_create(&b, NULL, reader, NULL);
  pthread_join(a, NULL);
  pthread_join(b, &sum);
  printf("sum=%ld\n", (long)sum);
  return 0;
}

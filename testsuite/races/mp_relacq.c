// race: no
// robust: yes
// reason: the release store of the flag synchronises with the acquire load that reads it (sw), so the payload write happens before the read
// Message passing: a plain payload handed over with a release/acquire flag.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

int data;
atomic_int flag;

static void *writer(void *arg) {
  data = 42;
  atomic_store_explicit(&flag, 1, memory_order_release);
  return arg;
}

static void *reader(void *arg) {
  while (atomic_load_explicit(&flag, memory_order_acquire) != 1) {
  }
  printf("%d\n", data);
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, writer, NULL);
  pthread_create(&b, NULL, reader, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}

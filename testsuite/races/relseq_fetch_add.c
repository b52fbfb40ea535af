// race: no
// robust: yes
// reason: C++20 release sequences: the relaxed fetch_add of a third thread continues the release sequence headed by the release store, so the acquire load that reads the RMW's value synchronises with the writer
// Release sequence through a relaxed fetch_add of a third thread.
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

static void *bumper(void *arg) {
  while (atomic_load_explicit(&flag, memory_order_relaxed) != 1) {
  }
  atomic_fetch_add_explicit(&flag, 1, memory_order_relaxed);
  return arg;
}

static void *reader(void *arg) {
  while (atomic_load_explicit(&flag, memory_order_acquire) != 2) {
  }
  printf("%d\n", data);
  return arg;
}

int main(void) {
  pthread_t a, b, c;
  pthread_create(&a, NULL, writer, NULL);
  pthread_create(&b, NULL, bumper, NULL);
  pthread_create(&c, NULL, reader, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  pthread_join(c, NULL);
  return 0;
}

// race: yes
// robust: yes
// reason: relaxed accesses create no synchronisation: the payload write and read are unordered
// Message passing with a relaxed flag: a data race on the payload.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

int data;
atomic_int flag;

static void *writer(void *arg) {
  data = 42; // pyrsan: race
  atomic_store_explicit(&flag, 1, memory_order_relaxed);
  return arg;
}

static void *reader(void *arg) {
  while (atomic_load_explicit(&flag, memory_order_relaxed) != 1) {
  }
  printf("%d\n", data); // pyrsan: race
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

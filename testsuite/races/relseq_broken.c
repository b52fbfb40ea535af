// race: yes
// robust: yes
// reason: C++20: a plain (non-RMW) store of another thread ends the release sequence, so the acquire load that reads it synchronises with nothing
// Release sequence broken by another thread's relaxed store: a data race on the payload.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

int data;
atomic_int flag;

static void *writer(void *arg) {
  data = 42; // pyrsan: race
  atomic_store_explicit(&flag, 1, memory_order_release);
  return arg;
}

static void *breaker(void *arg) {
  while (atomic_load_explicit(&flag, memory_order_relaxed) != 1) {
  }
  atomic_store_explicit(&flag, 2, memory_order_relaxed);
  return arg;
}

static void *reader(void *arg) {
  while (atomic_load_explicit(&flag, memory_order_acquire) != 2) {
  }
  printf("%d\n", data); // pyrsan: race
  return arg;
}

int main(void) {
  pthread_t a, b, c;
  pthread_create(&a, NULL, writer, NULL);
  pthread_create(&b, NULL, breaker, NULL);
  pthread_create(&c, NULL, reader, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  pthread_join(c, NULL);
  return 0;
}

// race: yes
// robust: yes
// reason: a plain read of an atomic object races with another thread's atomic store that does not happen before it (relaxed flag)
// Mixed atomic / non-atomic accesses to one location.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x;
atomic_int flag;

static void *writer(void *arg) {
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: race
  atomic_store_explicit(&flag, 1, memory_order_relaxed);
  return arg;
}

static void *reader(void *arg) {
  while (atomic_load_explicit(&flag, memory_order_relaxed) != 1) {
  }
  printf("%d\n", *(int *)&x); // pyrsan: race
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

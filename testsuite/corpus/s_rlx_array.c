// robust: no
// race: no
// reason: S shape all relaxed: T2 may read y=1 and still write x=1 mo-before T1's x=2 (po U rf U mo has a cycle through co)
// S shape on two elements of a global array of atomic ints, all relaxed.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int v[4];

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&v[1], 2, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  atomic_store_explicit(&v[3], 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  int r = atomic_load_explicit(&v[3], memory_order_relaxed); // pyrsan: violation
  atomic_store_explicit(&v[1], 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  return (void *)(long)r;
}

int main(void) {
  pthread_t a, b;
  void *r;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, &r);
  printf("r=%ld x=%d\n", (long)r, atomic_load(&v[1]));
  return 0;
}

// robust: yes
// race: no
// reason: LB through relaxed fetch_adds: each thread's RMW reads, then stores the other location; RC20 keeps po ∪ rf acyclic, so neither RMW can read the other thread's later store out of thin air; reference model (lb_rmw): robust
// LB where each thread's read is a relaxed fetch_add on a counter the other thread then bumps.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_uint x, y;
static unsigned r0, r1;

static void *t0(void *arg) {
  (void)arg;
  r0 = atomic_fetch_add_explicit(&x, 1, memory_order_relaxed);
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r1 = atomic_fetch_add_explicit(&y, 1, memory_order_relaxed);
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, t0, NULL);
  pthread_create(&b, NULL, t1, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%u %u %u %u\n", r0, r1, atomic_load(&x), atomic_load(&y));
  return 0;
}

// robust: no
// race: no
// reason: acq_rel exchanges are RMWs on different locations: nothing orders one thread's write before the other's later load (SB)
// SB with acq_rel atomic_exchange as the stores and acquire loads.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_long x, y;
static long r0, r1;

static void *t1(void *arg) {
  (void)arg;
  atomic_exchange_explicit(&x, 1, memory_order_acq_rel); // pyrsan: stale
  r0 = atomic_load_explicit(&y, memory_order_acquire); // pyrsan: violation
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_exchange_explicit(&y, 1, memory_order_acq_rel); // pyrsan: stale
  r1 = atomic_load_explicit(&x, memory_order_acquire); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("r0=%ld r1=%ld\n", r0, r1);
  return 0;
}

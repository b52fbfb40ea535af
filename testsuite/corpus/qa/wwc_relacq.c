// robust: yes
// race: no
// reason: WWC: T0 x=2 rlx; T1 reads x acquire, stores y release; T2 reads y acquire, stores x=1 rlx. If T2 reads y=1 it is hb-after T1's read of x, and if that read 2 T0's write is hb-before T2's write: coherence puts x=1 after x=2; reference model (wwc): robust
// WWC (write-to-write causality) with a release/acquire chain.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int a, b;

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 2, memory_order_relaxed);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  a = atomic_load_explicit(&x, memory_order_acquire);
  atomic_store_explicit(&y, 1, memory_order_release);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  b = atomic_load_explicit(&y, memory_order_acquire);
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t th[3];
  void *(*fn[3])(void *) = {t0, t1, t2};
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  printf("a=%d b=%d x=%d\n", a, b, atomic_load(&x));
  return 0;
}

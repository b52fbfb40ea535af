// robust: no
// race: no
// reason: if T1 reads x=1 and T2's relaxed RMW reads T1's y=2 while T2's SC fences (z=3) come before T0's trailing one, T2's x=4 follows x=1 in SC (po and rf) but not in hb, so RC20 may place x=4 before x=1 in mo, which SC forbids
// A rare schedule: one seeded run in ~60 shows it; the default's exploration of a small program finds it.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y, z;
int r0, r1;

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_seq_cst);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r0 = atomic_load_explicit(&x, memory_order_acquire);
  atomic_store_explicit(&y, 2, memory_order_release);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&z, 3, memory_order_seq_cst);
  r1 = atomic_fetch_add_explicit(&y, 1, memory_order_relaxed);
  atomic_store_explicit(&x, 4, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[3];
  void *(*fn[3])(void *) = {t0, t1, t2};
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("r0=%d r1=%d\n", r0, r1);
  return 0;
}

// robust: no
// race: yes
// reason: ISA2 whose middle load is relaxed: no happens-before from T1 to T3, so T3 may read z=1 and the old x (RC20), and the plain payload read races
// ISA2 with a relaxed middle load; the payload is a plain int: both a robustness violation and a data race.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static int data;
static atomic_int x, y, z;
static int seen = -1;

static void *t1(void *arg) {
  (void)arg;
  data = 42;
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: stale
  atomic_store_explicit(&y, 1, memory_order_release);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  if (atomic_load_explicit(&y, memory_order_relaxed))
    atomic_store_explicit(&z, 1, memory_order_release);
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  if (atomic_load_explicit(&z, memory_order_acquire)) {
    seen = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
    seen += data;
  }
  return NULL;
}

int main(void) {
  pthread_t th[3];
  void *(*fn[3])(void *) = {t1, t2, t3};
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("seen=%d\n", seen);
  return 0;
}

// robust: yes
// race: no
// reason: seq_cst accesses synchronise at least as release/acquire: as wrc_relacq
// WRC, all seq_cst.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int r0, r1, r2;

static void *t1(void *arg) {
  (void)arg;
  atomic_store(&x, 1);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r0 = atomic_load(&x);
  atomic_store(&y, 1);
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  r1 = atomic_load(&y);
  r2 = atomic_load(&x);
  return NULL;
}

int main(void) {
  pthread_t th[3];
  void *(*fn[3])(void *) = {t1, t2, t3};
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("r0=%d r1=%d r2=%d\n", r0, r1, r2);
  return 0;
}

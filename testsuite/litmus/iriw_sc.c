// robust: yes
// race: no
// reason: seq_cst accesses in the fenced model put SC fences between the reads: as iriw_fenced
// IRIW, all seq_cst.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int r0, r1, r2, r3;

static void *t1(void *arg) {
  (void)arg;
  atomic_store(&x, 1);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r0 = atomic_load(&x);
  r1 = atomic_load(&y);
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  atomic_store(&y, 1);
  return NULL;
}

static void *t4(void *arg) {
  (void)arg;
  r2 = atomic_load(&y);
  r3 = atomic_load(&x);
  return NULL;
}

int main(void) {
  pthread_t th[4];
  void *(*fn[4])(void *) = {t1, t2, t3, t4};
  for (int i = 0; i < 4; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  printf("r0=%d r1=%d r2=%d r3=%d\n", r0, r1, r2, r3);
  return 0;
}

// robust: yes
// race: no
// reason: the LB outcome needs a po U rf cycle, which RC20 forbids (no out-of-thin-air)
// Load buffering (LB), all seq_cst.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int r0, r1;

static void *t1(void *arg) {
  (void)arg;
  r0 = atomic_load(&x);
  atomic_store(&y, 1);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r1 = atomic_load(&y);
  atomic_store(&x, 1);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  void *(*fn[2])(void *) = {t1, t2};
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  printf("r0=%d r1=%d\n", r0, r1);
  return 0;
}

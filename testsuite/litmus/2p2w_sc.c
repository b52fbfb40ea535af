// robust: yes
// race: no
// reason: seq_cst stores in the fenced model put SC fences between them: as 2p2w_fenced
// 2+2W, seq_cst stores.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;

static void *t1(void *arg) {
  (void)arg;
  atomic_store(&x, 1);
  atomic_store(&y, 2);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store(&y, 1);
  atomic_store(&x, 2);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  void *(*fn[2])(void *) = {t1, t2};
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  return 0;
}

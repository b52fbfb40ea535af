// robust: no
// race: no
// options: --sc-accesses ra
// reason: with --sc-accesses ra seq_cst accesses are plain release/acquire (RC20 has no SC accesses), so this is sb_relacq
// Store buffering (SB), all accesses seq_cst, checked with seq_cst treated as release/acquire (RSAN's model).
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int r0, r1;

static void *t1(void *arg) {
  (void)arg;
  atomic_store(&x, 1);
  r0 = atomic_load(&y); // pyrsan: violation
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store(&y, 1);
  r1 = atomic_load(&x); // pyrsan: violation
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

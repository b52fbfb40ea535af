// robust: no
// race: no
// reason: the flag loop is recognised as wait(f != 0) (no report of its own: a stale read of 0 is only a failed attempt), but the relaxed flag does not synchronise, so the data load after it may still read the stale x = 0 (MP, relaxed)
// Message passing through a recognised spin loop `while (!atomic_load(&f));`, all relaxed.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, f;
int r0;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_store_explicit(&f, 1, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&f, memory_order_relaxed))
    ;
  r0 = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[2];
  void *(*fn[2])(void *) = {t1, t2};
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  printf("r0=%d\n", r0);
  return 0;
}

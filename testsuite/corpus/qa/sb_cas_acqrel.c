// robust: no
// race: no
// reason: SB where each thread's "store" is a strong CAS 0 -> 1 with acq_rel/acquire and its load acquire: release/acquire never orders a write before a later read of another location, so both loads may read 0; reference model (sb_cas_acqrel): not robust
// SB through acq_rel compare-exchange: each thread claims its own flag with a CAS, then reads the other's.
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

static atomic_int flag[2];
static int seen[2];

static void *claim(void *arg) {
  int me = (int)(long)arg;
  int expected = 0;
  bool ok = atomic_compare_exchange_strong_explicit(&flag[me], &expected, 1, memory_order_acq_rel, // pyrsan: stale
                                                    memory_order_acquire);
  seen[me] = atomic_load_explicit(&flag[1 - me], memory_order_acquire); // pyrsan: violation
  return (void *)(long)ok;
}

int main(void) {
  pthread_t th[2];
  for (long i = 0; i < 2; i++) pthread_create(&th[i], NULL, claim, (void *)i);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%d %d\n", seen[0], seen[1]);
  return 0;
}

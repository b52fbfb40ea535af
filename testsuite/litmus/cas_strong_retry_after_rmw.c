// robust: yes
// race: no
// reason: the only stale write t2's strong CAS could read is the initial x = 0, its expected value, and t1's fetch_add reads it (atomicity: no other RMW may), so the CAS can neither fail on it nor succeed reading it; the weak-CAS read check reported it (Tsc(x) > Tc(x)) before value tracking
// A strong-CAS retry loop after an RMW, SB-shaped (t1 runs first): robust, no report.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int r0, r1;

static void *t1(void *arg) {
  (void)arg;
  atomic_fetch_add_explicit(&x, 1, memory_order_acq_rel);
  r0 = atomic_load_explicit(&y, memory_order_acquire);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release);
  int e = 0;
  while (!atomic_compare_exchange_strong_explicit(&x, &e, e + 5, memory_order_acq_rel,
                                                  memory_order_acquire))
    ;
  r1 = e;
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

// model-none: the retry's expected value is what the failed attempt read (a value-dependent loop, no BCAS), which the straight-line model cannot express

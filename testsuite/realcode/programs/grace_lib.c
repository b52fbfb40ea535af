/* A tiny reclamation library, built WITHOUT pyrsan (as a Debian libck or liburcu is): a grace
 * period waits until every registered reader has left its read-side section. The
 * synchronisation it relies on (the readers' release stores of `active`, read here) is
 * invisible to a sanitizer: nothing in this file is instrumented. */
#include <stdatomic.h>
#include <sched.h>

#define MAX_READERS 8
static _Atomic(atomic_int *) readers[MAX_READERS];

void grace_register(atomic_int *active) {
  for (int i = 0; i < MAX_READERS; i++) {
    atomic_int *none = NULL;
    if (atomic_compare_exchange_strong(&readers[i], &none, active)) return;
  }
}

void grace_synchronize(void) {
  for (int i = 0; i < MAX_READERS; i++) {
    atomic_int *r = atomic_load(&readers[i]);
    if (r == NULL) continue;
    while (atomic_load_explicit(r, memory_order_acquire) != 0) sched_yield();
  }
}

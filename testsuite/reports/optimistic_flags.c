/* Span ownership bits updated by an optimistic compare-exchange loop: the first attempt
 * assumes the word is clear, a failure retries from the value it read. Threads also count
 * their updates in a relaxed per-span counter. With SPAN_LOG_CONFLICTS the loop records each
 * conflicting value it saw in a shared word (a failure then has an effect). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define ROUNDS 30

typedef struct span {
  _Atomic(uintptr_t) owners;
  _Atomic(uintptr_t) updates;
  _Atomic(uintptr_t) last_conflict;
} span_t;

static span_t span;

static void span_update(span_t *s, uintptr_t set, uintptr_t clear) {
  uintptr_t seen = 0;
  while (!atomic_compare_exchange_weak_explicit(&s->owners, &seen, (seen & ~clear) | set,
                                                memory_order_acq_rel, memory_order_relaxed)) {
#ifdef SPAN_LOG_CONFLICTS
    atomic_store_explicit(&s->last_conflict, seen, memory_order_relaxed);
#endif
  }
}

static void *worker(void *arg) {
  uintptr_t bit = (uintptr_t)1 << (uintptr_t)arg;
  for (int i = 0; i < ROUNDS; i++) {
    span_update(&span, bit, 0);
    atomic_fetch_add_explicit(&span.updates, 1, memory_order_relaxed);
    span_update(&span, 0, bit);
  }
  return NULL;
}

int main(void) {
  pthread_t t[3];
  for (uintptr_t k = 0; k < 3; k++) pthread_create(&t[k], NULL, worker, (void *)k);
  for (int k = 0; k < 3; k++) pthread_join(t[k], NULL);
  uintptr_t n = atomic_load(&span.updates);
  printf("updates %lu owners %lu\n", (unsigned long)n, (unsigned long)atomic_load(&span.owners));
  return n == 3 * ROUNDS ? 0 : 1;
}

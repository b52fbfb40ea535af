// robust: yes
// race: no
// reason: a worker claims slots of a table with acq_rel CASes and leaves its search with longjmp when the table is full (jumping over frames that hold no atomic state); each claimed slot's plain payload is written after the successful CAS (the slot's owner) and read by main after join; failed CASes only feed the next slot's attempt
// CAS-based slot claiming with a longjmp out of nested calls when the table is full.
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>

#define SLOTS 6
static atomic_int owner[SLOTS];
static int payload[SLOTS];

static __attribute__((noinline)) void claim_one(jmp_buf *full, int me) {
  for (int i = 0; i < SLOTS; i++) {
    int expected = 0;
    if (atomic_compare_exchange_strong_explicit(&owner[i], &expected, me, memory_order_acq_rel, memory_order_acquire)) {
      payload[i] = me * 100 + i;
      return;
    }
  }
  longjmp(*full, 1);
}

static __attribute__((noinline)) void claim_many(jmp_buf *full, int me) {
  for (;;) claim_one(full, me);
}

static void *worker(void *arg) {
  int me = (int)(long)arg;
  jmp_buf full;
  if (setjmp(full) == 0) claim_many(&full, me);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, worker, (void *)1L);
  pthread_create(&b, NULL, worker, (void *)2L);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  int mine[3] = {0};
  for (int i = 0; i < SLOTS; i++) mine[atomic_load(&owner[i])] += payload[i] != 0;
  printf("%d %d\n", mine[1], mine[2]);
  return 0;
}

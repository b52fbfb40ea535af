/* Concurrency Kit (libck-dev): ck_stack MPMC push/pop (a generation-counted DCAS stack,
 * cmpxchg16b in ck_pr on x86-64), 3 threads popping and pushing back preallocated entries.
 * Checks that no entry is lost. */
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <ck_stack.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS (SMALL ? 2 : 3)
#define ENTRIES (SMALL ? 2 : 32)
#define ROUNDS (SMALL ? 2 : 500)
static ck_stack_t stack CK_CC_CACHELINE = CK_STACK_INITIALIZER;
static ck_stack_entry_t entries[ENTRIES];

static void *worker(void *arg) {
  for (int i = 0; i < ROUNDS; i++) {
    ck_stack_entry_t *e = ck_stack_pop_mpmc(&stack);
    if (e != NULL) ck_stack_push_mpmc(&stack, e);
  }
  return arg;
}

int main(void) {
  for (int i = 0; i < ENTRIES; i++) ck_stack_push_mpmc(&stack, &entries[i]);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], 0, worker, 0);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
  int n = 0;
  while (ck_stack_pop_upmc(&stack) != NULL) n++;
  printf("%s %d\n", (n == ENTRIES) ? "ok" : "bad", n);
  return (n == ENTRIES) ? 0 : 1;
}

/* libatomic_ops (libatomic-ops-dev; link: -latomic_ops_gpl -latomic_ops): AO_stack (a
 * lock-free stack from the uninstrumented static library) and AO_fetch_and_add1_full, 3 threads
 * pushing and popping heap blocks. Checks that every block comes back. */
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <atomic_ops.h>
#include <atomic_ops_stack.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS (SMALL ? 2 : 2000)
static AO_stack_t stack = AO_STACK_INITIALIZER;
static volatile AO_t popped = 0;

static void *work(void *arg) {
  (void)arg;
  for (int i = 0; i < ROUNDS; i++) {
    AO_t *block = malloc(2 * sizeof(AO_t));
    AO_stack_push_release(&stack, block);
    AO_t *got = AO_stack_pop_acquire(&stack);
    if (got) {
      free(got);
      AO_fetch_and_add1_full(&popped);
    }
  }
  return 0;
}

int main(void) {
  pthread_t t[3];
  for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, work, 0);
  for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
  AO_t *got;
  unsigned long n = AO_load(&popped);
  while ((got = AO_stack_pop_acquire(&stack))) {
    free(got);
    n++;
  }
  if (n != 3 * ROUNDS) {
    printf("bad: %lu blocks, want %d\n", n, 3 * ROUNDS);
    return 1;
  }
  printf("ok %lu blocks\n", n);
  return 0;
}

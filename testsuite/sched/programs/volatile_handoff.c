/* Two threads hand a turn back and forth through a volatile word, 200 rounds each, and
 * nothing else: no atomic, no lock. Under a controlled scheduler the spin loops' volatile
 * loads must be scheduling points (docs/scheduling.md "Volatile spin loops"), or the thread
 * holding the turn spins for ever while the other never runs. */
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 200

static volatile int turn;
static int counter; /* handed over with the turn (a race under C11: volatile is not atomic) */

static void *player(void *arg) {
  int me = (int)(long)arg;
  for (int i = 0; i < ROUNDS; i++) {
    while (turn != me) {
    }
    counter++;
    turn = 1 - me;
  }
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, player, (void *)1L);
  player((void *)0L);
  pthread_join(t, NULL);
  printf("counter %d\n", counter);
  return 0;
}

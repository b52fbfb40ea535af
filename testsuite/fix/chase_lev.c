// An owner and a thief on the Chase-Lev style deque of chase_lev_deque.h (the fixes go there).
// Sleeps (not synchronisation) make the OS scheduler run: the owner's pushes; the thief's
// reads of top and bottom; the owner's takes (store bottom, read top); the thief's CAS on top;
// a second steal, whose read of bottom is stale: SC orders the takes' stores before it
// (through the CAS that overwrote the top the owner read), release/acquire does not.
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "chase_lev_deque.h"

static deque q;
static int taken, stolen;

static void *owner(void *arg) {
  (void)arg;
  for (int i = 1; i <= 4; i++)
    push(&q, i);
  nanosleep(&(struct timespec){0, 20 * 1000000L}, NULL);
  for (int i = 0; i < 2; i++)
    if (take(&q) != EMPTY)
      taken++;
  return NULL;
}

static void *thief(void *arg) {
  (void)arg;
  nanosleep(&(struct timespec){0, 5 * 1000000L}, NULL);
  for (int i = 0; i < 2; i++)
    if (steal(&q, i == 0) != EMPTY)
      stolen++;
  return NULL;
}

int main(void) {
  pthread_t th[2];
  pthread_create(&th[0], NULL, owner, NULL);
  pthread_create(&th[1], NULL, thief, NULL);
  pthread_join(th[0], NULL);
  pthread_join(th[1], NULL);
  printf("taken=%d stolen=%d\n", taken, stolen);
  return 0;
}

// robust: yes
// race: no
// reason: two threads take turns on a counter: each waits (acquire) until the turn counter is one more than the value it last wrote, then writes the plain log and advances the counter with a release store; a stale read of an older turn only spins
// The wait compares with an expression of a local (`t + 1`), as sequence-number code does.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int turn;
static int log_[4];

static void *player(void *arg) {
  int me = (int)(long)arg;
  for (int t = me; t < 4; t += 2) {
    while (atomic_load_explicit(&turn, memory_order_acquire) != t - 1 + 1) {
    }
    log_[t] = me;
    atomic_store_explicit(&turn, t + 1, memory_order_release);
  }
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, player, (void *)0L);
  pthread_create(&b, NULL, player, (void *)1L);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  int ok = 1;
  for (int t = 0; t < 4; t++)
    ok &= log_[t] == t % 2;
  printf("%d\n", ok);
  return ok ? 0 : 1;
}

// robust: no
// race: no
// reason: relaxed Dekker: the SB pattern on the flags, and the turn store is unordered too
// Dekker's mutual exclusion, all relaxed.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

atomic_int flag[2], turn, counter;

static void *thread(void *arg) {
  int me = (int)(intptr_t)arg, other = 1 - me;
  for (;;) {
    atomic_store_explicit(&flag[me], 1, memory_order_relaxed);
    int o = atomic_load_explicit(&flag[other], memory_order_relaxed); // pyrsan: violation
    int retry = 0;
    while (o == 1) {
      if (atomic_load_explicit(&turn, memory_order_relaxed) != me) {
        atomic_store_explicit(&flag[me], 0, memory_order_relaxed);
        while (atomic_load_explicit(&turn, memory_order_relaxed) != me)
          ;
        retry = 1;
        break;
      }
      o = atomic_load_explicit(&flag[other], memory_order_relaxed);
    }
    if (!retry)
      break;
  }
  atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed); /* critical section */
  atomic_store_explicit(&turn, other, memory_order_relaxed); // pyrsan: violation
  atomic_store_explicit(&flag[me], 0, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  for (intptr_t i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, thread, (void *)i);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  printf("counter=%d\n", atomic_load_explicit(&counter, memory_order_relaxed));
  return 0;
}

// The reference model's transcription (litmus_model.py), a prefix of every run: each thread up to its first read of
// the other's flag (a non-robust prefix makes the program non-robust).
// model-prefix: T1: st(flag0, 1, rlx); ld(flag1, rlx)
// model-prefix: T2: st(flag1, 1, rlx); ld(flag0, rlx)

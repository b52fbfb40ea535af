// robust: no
// race: no
// reason: the store to turn can be mo-before the other thread's, and the flag load can read a stale 0, both SC-inconsistent (Rocker peterson-ra-bratosz: not robust)
// Peterson's lock with release stores and acquire loads; flagged at the turn store (write) and the flag load.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

atomic_int flag[2], turn, counter;

static void *thread(void *arg) {
  int me = (int)(intptr_t)arg, other = 1 - me;
  atomic_store_explicit(&flag[me], 1, memory_order_release);
  atomic_store_explicit(&turn, other, memory_order_release); // pyrsan: violation
  while (atomic_load_explicit(&flag[other], memory_order_acquire) == 1 && // pyrsan: violation
         atomic_load_explicit(&turn, memory_order_acquire) == other)
    ;
  atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed); /* critical section */
  atomic_store_explicit(&flag[me], 0, memory_order_release);
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
// model-prefix: T1: st(flag0, 1, rel); st(turn, 1, rel); ld(flag1, acq)
// model-prefix: T2: st(flag1, 1, rel); st(turn, 0, rel); ld(flag0, acq)

// robust: yes
// race: no
// reason: a test-and-set lock (weak CAS acquire, release unlock): the sections are ordered by hb through the lock word; a failed CAS reading the held lock is SC-explainable (checked exhaustively with the location-clock model, 3 threads)
// CAS spinlock: three threads increment a relaxed atomic and a plain counter under a weak-CAS lock.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int lock, counter;
int plain_counter;

static void *worker(void *arg) {
  (void)arg;
  int expected = 0;
  while (!atomic_compare_exchange_weak_explicit(&lock, &expected, 1, memory_order_acquire,
                                                memory_order_relaxed))
    expected = 0;
  int c = atomic_load_explicit(&counter, memory_order_relaxed);
  atomic_store_explicit(&counter, c + 1, memory_order_relaxed);
  plain_counter++;
  atomic_store_explicit(&lock, 0, memory_order_release);
  return NULL;
}

int main(void) {
  pthread_t th[3];
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, worker, NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("counter=%d plain=%d\n", atomic_load_explicit(&counter, memory_order_relaxed), plain_counter);
  return 0;
}

// The reference model's transcription (litmus_model.py): the weak-CAS retry loop with e reset to 0 is a
// BCAS (passes/spinloops.py recognises it); the counter's stored value (c + 1) is written as 1.
// model: T1: bcas(lock, 0, 1, acq); ld(counter, rlx); st(counter, 1, rlx); st(lock, 0, rel)
// model: T2: bcas(lock, 0, 1, acq); ld(counter, rlx); st(counter, 1, rlx); st(lock, 0, rel)
// model: T3: bcas(lock, 0, 1, acq); ld(counter, rlx); st(counter, 1, rlx); st(lock, 0, rel)

// robust: yes
// race: no
// reason: a test-and-set lock written with pyrsan_bcas (acquire) and a release unlock: the critical sections are ordered by hb through the lock word; a BCAS reads only 0, and a stale 0 is always followed by the RMW of the thread that took the lock (atomicity), so no RMW can read it
// Spin lock with pyrsan_bcas: three threads increment a relaxed atomic and a plain counter.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <pyrsan.h>
#include <stdio.h>

atomic_int lock, counter;
int plain_counter;

static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < 3; i++) {
    pyrsan_bcas_explicit(&lock, 0, 1, memory_order_acquire);
    int c = atomic_load_explicit(&counter, memory_order_relaxed);
    atomic_store_explicit(&counter, c + 1, memory_order_relaxed);
    plain_counter++;
    atomic_store_explicit(&lock, 0, memory_order_release);
  }
  return NULL;
}

int main(void) {
  pthread_t th[3];
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, worker, NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("counter=%d plain=%d\n", atomic_load_explicit(&counter, memory_order_relaxed), plain_counter);
  return plain_counter == 9 ? 0 : 1;
}

// The reference model's transcription (litmus_model.py): three workers, each three lock/unlock rounds; the
// counter's stored value (c + 1) is written as 1: no operation on counter depends on values.
// model: T1: bcas(lock, 0, 1, acq); ld(counter, rlx); st(counter, 1, rlx); st(lock, 0, rel); bcas(lock, 0, 1, acq); ld(counter, rlx); st(counter, 1, rlx); st(lock, 0, rel); bcas(lock, 0, 1, acq); ld(counter, rlx); st(counter, 1, rlx); st(lock, 0, rel)
// model: T2: bcas(lock, 0, 1, acq); ld(counter, rlx); st(counter, 1, rlx); st(lock, 0, rel); bcas(lock, 0, 1, acq); ld(counter, rlx); st(counter, 1, rlx); st(lock, 0, rel); bcas(lock, 0, 1, acq); ld(counter, rlx); st(counter, 1, rlx); st(lock, 0, rel)
// model: T3: bcas(lock, 0, 1, acq); ld(counter, rlx); st(counter, 1, rlx); st(lock, 0, rel); bcas(lock, 0, 1, acq); ld(counter, rlx); st(counter, 1, rlx); st(lock, 0, rel); bcas(lock, 0, 1, acq); ld(counter, rlx); st(counter, 1, rlx); st(lock, 0, rel)

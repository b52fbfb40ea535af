// robust: yes
// race: no
// reason: the lock word is the program's only atomic location, and one location's accesses are always SC (RC20 coherence: po-loc, rf, mo and fr on one location are acyclic), whatever the orders; the exchange (acquire) that takes the lock reads the release store of the previous unlock, so the plain counter's accesses are hb-ordered
// Test-and-test-and-set spin lock (relaxed inner spin, acquire exchange, release unlock) shared by 16 threads around a plain counter.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define T 16
static atomic_int lock;
static long counter;

static void acquire_lock(void) {
  for (;;) {
    while (atomic_load_explicit(&lock, memory_order_relaxed)) {
    }
    if (!atomic_exchange_explicit(&lock, 1, memory_order_acquire)) return;
  }
}

static void *work(void *arg) {
  (void)arg;
  for (int i = 0; i < 3; i++) {
    acquire_lock();
    counter++;
    atomic_store_explicit(&lock, 0, memory_order_release);
  }
  return NULL;
}

int main(void) {
  pthread_t t[T];
  for (int i = 0; i < T; i++) pthread_create(&t[i], NULL, work, NULL);
  for (int i = 0; i < T; i++) pthread_join(t[i], NULL);
  printf("%ld\n", counter);
  return 0;
}

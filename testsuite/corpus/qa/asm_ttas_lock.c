// robust: yes
// race: no
// reason: a test-and-test-and-set lock written with x86 inline asm as Concurrency Kit writes its default mode (a `movl` load, modelled as an acquire load; `xchgl`, a seq_cst exchange; a `movl` store, a release store; `pause`): the first thread holds it from the start, rewrites the held word (2), raises go (relaxed), bumps the plain counter and unlocks; the second waits for go and takes the lock. After go it may still read the initial 1, older than the 2 it knows of: a stale read, but a failed test of the lock, which leaves nothing behind; the test's read that sees 0 reads the newest write, the exchange reads the latest value, and the release store / exchange order the counter
// A spin lock made of asm loads, exchanges and stores (passes/asm.py, passes/spinloops.py).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static unsigned word = 1;
static atomic_int go;
static long counter;

static inline unsigned load_word(unsigned *p) {
  unsigned r;
  __asm__ __volatile__("movl %1, %0" : "=q"(r) : "m"(*p) : "memory");
  return r;
}
static inline void store_word(unsigned *p, unsigned v) {
  __asm__ __volatile__("movl %1, %0" : "=m"(*p) : "q"(v) : "memory");
}
static inline unsigned swap_word(unsigned *p, unsigned v) {
  __asm__ __volatile__("xchgl %0, %1" : "+m"(*p), "+q"(v) : : "memory");
  return v;
}
static inline void stall(void) { __asm__ __volatile__("pause" ::: "memory"); }

static void lock(void) {
  for (;;) {
    while (load_word(&word) != 0) stall();
    if (swap_word(&word, 1) == 0) return;
  }
}

static void *owner(void *arg) {
  (void)arg;
  store_word(&word, 2);
  atomic_store_explicit(&go, 1, memory_order_relaxed);
  counter++;
  store_word(&word, 0);
  return NULL;
}

static void *taker(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&go, memory_order_relaxed)) {
  }
  lock();
  counter++;
  store_word(&word, 0);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, owner, NULL);
  pthread_create(&b, NULL, taker, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%ld\n", counter);
  return 0;
}

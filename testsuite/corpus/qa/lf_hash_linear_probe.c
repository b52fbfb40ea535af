// robust: yes
// race: no
// reason: open addressing with keys claimed by an acq_rel CAS from 0 and values published with a release store after the claim; a lookup probes keys in order with acquire loads and reads the value with an acquire load, retrying while it is 0; no thread writes a location and then reads another one that a second thread writes before reading the first (every cross-thread edge is a release/acquire message or an RMW on one key), so no SB/2+2W/R/S cycle; the slots' values are atomics
// Lock-free linear-probing hash set/map (fixed table): two inserters whose keys collide and a reader that looks both up.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define SLOTS 8
static atomic_uint keys[SLOTS];
static atomic_uint vals[SLOTS];

static void insert(unsigned k, unsigned v) {
  for (unsigned i = k % SLOTS;; i = (i + 1) % SLOTS) {
    unsigned cur = atomic_load_explicit(&keys[i], memory_order_acquire);
    if (cur == 0) {
      unsigned expected = 0;
      if (atomic_compare_exchange_strong_explicit(&keys[i], &expected, k, memory_order_acq_rel,
                                                  memory_order_acquire))
        cur = k;
      else
        cur = expected;
    }
    if (cur == k) {
      atomic_store_explicit(&vals[i], v, memory_order_release);
      return;
    }
  }
}

static unsigned lookup(unsigned k) {
  for (unsigned i = k % SLOTS, n = 0; n < SLOTS; i = (i + 1) % SLOTS, n++) {
    unsigned cur = atomic_load_explicit(&keys[i], memory_order_acquire);
    if (cur == k) return atomic_load_explicit(&vals[i], memory_order_acquire);
    if (cur == 0) return 0;
  }
  return 0;
}

static void *ins1(void *a) { insert(3, 30); insert(19, 190); return a; }
static void *ins2(void *a) { insert(11, 110); return a; }
static void *reader(void *a) {
  unsigned r = lookup(11) + lookup(19);
  printf("%u\n", r > 0);
  return a;
}

int main(void) {
  pthread_t t[3];
  pthread_create(&t[0], NULL, ins1, NULL);
  pthread_create(&t[1], NULL, ins2, NULL);
  pthread_create(&t[2], NULL, reader, NULL);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  printf("%u %u %u\n", lookup(3), lookup(11), lookup(19));
  return 0;
}

// robust: yes
// race: no
// reason: a 16-byte atomic struct updated only by CAS loops (one location, RMWs): coherence
// 16-byte _Atomic struct {ptr, tag} updated by compare_exchange loops from two threads.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

struct tagged {
  uint64_t value;
  uint64_t tag;
};
static _Atomic struct tagged cell;

static void *work(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    struct tagged old = atomic_load_explicit(&cell, memory_order_acquire), nw;
    do {
      nw.value = old.value + 1;
      nw.tag = old.tag + 1;
    } while (!atomic_compare_exchange_weak_explicit(&cell, &old, nw, memory_order_acq_rel,
                                                    memory_order_acquire));
  }
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, work, NULL);
  pthread_create(&b, NULL, work, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  struct tagged t = atomic_load(&cell);
  printf("%llu %llu\n", (unsigned long long)t.value, (unsigned long long)t.tag);
  return t.value == 4 ? 0 : 1;
}

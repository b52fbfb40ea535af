// robust: yes
// race: no
// reason: once-init with a three-state word (0 uninit, 1 running, 2 done): the winner's acq_rel CAS 0 -> 1 excludes the others, it fills the table (plain) and stores 2 with release; a loser (its CAS failed reading 1 or 2) waits for 2 with acquire, and a fast path that reads 2 with acquire synchronises too; every read of state either waits for 2 or is the CAS that decides (an RMW reads the latest)
// Once-initialisation of a lookup table with a 0/1/2 state word and a CAS, four threads.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int state;
static int table[8];

static const int *get_table(void) {
  if (atomic_load_explicit(&state, memory_order_acquire) == 2) return table;
  int expected = 0;
  if (atomic_compare_exchange_strong_explicit(&state, &expected, 1, memory_order_acq_rel, memory_order_acquire)) {
    for (int i = 0; i < 8; i++) table[i] = i * i;
    atomic_store_explicit(&state, 2, memory_order_release);
  } else {
    while (atomic_load_explicit(&state, memory_order_acquire) != 2) {
    }
  }
  return table;
}

static void *user(void *arg) {
  int k = (int)(long)arg;
  const int *t = get_table();
  return (void *)(long)t[k];
}

int main(void) {
  pthread_t th[4];
  for (long i = 0; i < 4; i++) pthread_create(&th[i], NULL, user, (void *)(i + 1));
  long sum = 0;
  for (int i = 0; i < 4; i++) {
    void *r;
    pthread_join(th[i], &r);
    sum += (long)r;
  }
  printf("%ld\n", sum);
  return 0;
}

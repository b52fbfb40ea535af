// robust: yes
// race: no
// reason: a sense-reversing barrier: each thread flips its local sense and decrements the count with an acq_rel fetch_sub; the last one resets the count (relaxed, ordered before its release store of the sense) and stores the new sense with release; the others wait for that sense with acquire. Every phase's plain writes happen before the next phase's reads (the RMW chain and the release/acquire sense); the waits read only the value they wait for
// Three threads, two phases, through a hand-written sense-reversing barrier.
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#define N 3
static atomic_int count = N;
static atomic_bool sense;
static int cell[N];
static int out[N];

static void barrier(bool *local) {
  *local = !*local;
  if (atomic_fetch_sub_explicit(&count, 1, memory_order_acq_rel) == 1) {
    atomic_store_explicit(&count, N, memory_order_relaxed);
    atomic_store_explicit(&sense, *local, memory_order_release);
  } else {
    while (atomic_load_explicit(&sense, memory_order_acquire) != *local) {
    }
  }
}

static void *worker(void *arg) {
  int id = (int)(long)arg;
  bool local = false;
  cell[id] = id + 1;
  barrier(&local);
  out[id] = cell[(id + 1) % N];
  barrier(&local);
  cell[id] = 0;
  return NULL;
}

int main(void) {
  pthread_t th[N];
  for (long i = 0; i < N; i++) pthread_create(&th[i], NULL, worker, (void *)i);
  for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
  printf("%d %d %d\n", out[0], out[1], out[2]);
  return 0;
}

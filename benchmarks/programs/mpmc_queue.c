/* Benchmark program (a): a bounded MPMC ring buffer with per-cell sequence numbers
 * (D. Vyukov's design), 1024 cells, i.e. about a thousand atomic locations in use.
 * NTHREADS threads each repeat: enqueue a batch of BATCH values, dequeue BATCH values.
 * Orders are the usual ones of the design (relaxed positions + CAS, acquire/release cell
 * sequence numbers); the relaxed position loads are not robust, so pyrsan may report them.
 *
 * usage: mpmc_queue [ROUNDS_PER_THREAD]      prints "ok <sum>" or "mismatch ..." (exit 1) */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4
#define CAPACITY 1024 /* power of two */
#define BATCH 64      /* NTHREADS * BATCH <= CAPACITY: enqueue never finds the ring full */

struct cell {
  atomic_size_t seq;
  long value;
};

static struct cell ring[CAPACITY];
static atomic_size_t enqueue_pos;
static atomic_size_t dequeue_pos;
static long rounds;
static long sums[NTHREADS];

static int try_enqueue(long v) {
  size_t pos = atomic_load_explicit(&enqueue_pos, memory_order_relaxed);
  for (;;) {
    struct cell *c = &ring[pos & (CAPACITY - 1)];
    size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
    long dif = (long)seq - (long)pos;
    if (dif == 0) {
      if (atomic_compare_exchange_weak_explicit(&enqueue_pos, &pos, pos + 1,
                                                memory_order_relaxed, memory_order_relaxed)) {
        c->value = v;
        atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
        return 1;
      }
    } else if (dif < 0) {
      return 0; /* full */
    } else {
      pos = atomic_load_explicit(&enqueue_pos, memory_order_relaxed);
    }
  }
}

static int try_dequeue(long *v) {
  size_t pos = atomic_load_explicit(&dequeue_pos, memory_order_relaxed);
  for (;;) {
    struct cell *c = &ring[pos & (CAPACITY - 1)];
    size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
    long dif = (long)seq - (long)(pos + 1);
    if (dif == 0) {
      if (atomic_compare_exchange_weak_explicit(&dequeue_pos, &pos, pos + 1,
                                                memory_order_relaxed, memory_order_relaxed)) {
        *v = c->value;
        atomic_store_explicit(&c->seq, pos + CAPACITY, memory_order_release);
        return 1;
      }
    } else if (dif < 0) {
      return 0; /* empty (or an enqueue not yet published) */
    } else {
      pos = atomic_load_explicit(&dequeue_pos, memory_order_relaxed);
    }
  }
}

static void *worker(void *arg) {
  long id = (long)arg, sum = 0, next = id * 1000000007L;
  for (long r = 0; r < rounds; r++) {
    for (int i = 0; i < BATCH; i++) {
      int spins = 0;
      while (!try_enqueue(next))
        if (++spins % 64 == 0) sched_yield();
      next++;
    }
    for (int i = 0; i < BATCH; i++) {
      long v;
      int spins = 0;
      while (!try_dequeue(&v))
        if (++spins % 64 == 0) sched_yield();
      sum += v;
    }
  }
  sums[id] = sum;
  return NULL;
}

int main(int argc, char **argv) {
  rounds = argc > 1 ? atol(argv[1]) : 2000;
  for (size_t i = 0; i < CAPACITY; i++)
    atomic_init(&ring[i].seq, i);
  pthread_t t[NTHREADS];
  for (long i = 0; i < NTHREADS; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  long total = 0, expected = 0, n = rounds * BATCH;
  for (long i = 0; i < NTHREADS; i++) {
    pthread_join(t[i], NULL);
    total += sums[i];
    expected += i * 1000000007L * n + n * (n - 1) / 2;
  }
  if (total != expected) {
    printf("mismatch %ld != %ld\n", total, expected);
    return 1;
  }
  printf("ok %ld\n", total);
  return 0;
}

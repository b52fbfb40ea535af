/* Benchmark program (c): message passing with release/acquire over many rounds.
 * NPAIRS producer/consumer pairs; each pair shares a ring of SLOTS slots. For round r the
 * producer waits until the slot's previous message was consumed (acquire load of ack),
 * writes the payload (relaxed atomic stores), then publishes with a release store of seq;
 * the consumer waits for seq == r with acquire loads, reads the payload (relaxed loads)
 * and releases the slot with a release store of ack. All message passing is rel/acq, so
 * the program is robust and race-free.
 *
 * usage: message_passing [ROUNDS]      prints "ok <sum>" or "mismatch ..." (exit 1) */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define NPAIRS 2
#define SLOTS 64
#define WORDS 4

struct slot {
  atomic_long seq; /* round published in this slot, -1: none yet */
  atomic_long ack; /* round consumed from this slot, -1: none yet */
  atomic_long payload[WORDS];
};

static struct slot rings[NPAIRS][SLOTS];
static long rounds;
static long results[NPAIRS];

static void wait_for(atomic_long *a, long want) {
  int spins = 0;
  while (atomic_load_explicit(a, memory_order_acquire) != want)
    if (++spins % 32 == 0) sched_yield();
}

static void *producer(void *arg) {
  struct slot *ring = rings[(long)arg];
  for (long r = 0; r < rounds; r++) {
    struct slot *s = &ring[r % SLOTS];
    if (r >= SLOTS)
      wait_for(&s->ack, r - SLOTS);
    for (int w = 0; w < WORDS; w++)
      atomic_store_explicit(&s->payload[w], r * WORDS + w, memory_order_relaxed);
    atomic_store_explicit(&s->seq, r, memory_order_release);
  }
  return NULL;
}

static void *consumer(void *arg) {
  long pair = (long)arg, sum = 0;
  struct slot *ring = rings[pair];
  for (long r = 0; r < rounds; r++) {
    struct slot *s = &ring[r % SLOTS];
    wait_for(&s->seq, r);
    for (int w = 0; w < WORDS; w++)
      sum += atomic_load_explicit(&s->payload[w], memory_order_relaxed);
    atomic_store_explicit(&s->ack, r, memory_order_release);
  }
  results[pair] = sum;
  return NULL;
}

int main(int argc, char **argv) {
  rounds = argc > 1 ? atol(argv[1]) : 200000;
  for (int p = 0; p < NPAIRS; p++)
    for (int i = 0; i < SLOTS; i++) {
      atomic_init(&rings[p][i].seq, -1);
      atomic_init(&rings[p][i].ack, -1);
    }
  pthread_t t[2 * NPAIRS];
  for (long p = 0; p < NPAIRS; p++) {
    pthread_create(&t[2 * p], NULL, producer, (void *)p);
    pthread_create(&t[2 * p + 1], NULL, consumer, (void *)p);
  }
  for (int i = 0; i < 2 * NPAIRS; i++)
    pthread_join(t[i], NULL);
  long n = rounds * WORDS, want = n * (n - 1) / 2, total = 0;
  for (int p = 0; p < NPAIRS; p++) {
    if (results[p] != want) {
      printf("mismatch pair %d: %ld != %ld\n", p, results[p], want);
      return 1;
    }
    total += results[p];
  }
  printf("ok %ld\n", total);
  return 0;
}

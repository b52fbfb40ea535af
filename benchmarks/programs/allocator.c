/* An allocator-like workload (benchmarks/scaling.py --allocator, issue 11): per-thread heaps
 * of blocks with atomic headers, blocks handed to other threads through per-thread atomic
 * inboxes (Treiber stacks: CAS push, exchange pop), and cross-thread frees through each
 * heap's atomic MPSC remote-free list, drained by the owner when its local free list is empty.
 *
 *   allocator NTHREADS BLOCKS_PER_THREAD ROUNDS
 *
 * Atomic locations: 2 per block (header, next) + 2 per thread: with 16 threads and 1,024
 * blocks each, 32,800. Each thread allocates BLOCKS_PER_THREAD / 2 blocks per round, writes
 * their payload (plain), sends each to another thread, and frees what it receives (after
 * checking the payload, which the inbox's release/acquire orders). Prints "ok ..." when every
 * block is back in its heap and every payload was seen intact. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>

typedef struct block {
  _Atomic uint64_t header; /* owner << 32 | state (1 allocated, 0 free) */
  _Atomic(struct block *) next;
  uint64_t payload[6];
} block;

typedef struct heap {
  _Atomic(block *) remote; /* MPSC: other threads push freed blocks, the owner takes all */
  _Atomic(block *) inbox;  /* blocks sent to this thread */
  block *local;            /* owner only (plain) */
  block *blocks;
  long nlocal;
  char pad[64];
} heap;

static long nthreads, nblocks, rounds;
static heap *heaps;
static _Atomic long outstanding; /* blocks allocated and not yet freed */
static _Atomic long finished;    /* threads done with their rounds (all their sends made) */
static _Atomic long bad;

static void push(_Atomic(block *) *head, block *b) {
  block *h = atomic_load_explicit(head, memory_order_relaxed);
  do {
    atomic_store_explicit(&b->next, h, memory_order_relaxed);
  } while (!atomic_compare_exchange_weak_explicit(head, &h, b, memory_order_release, memory_order_relaxed));
}

static block *take_all(_Atomic(block *) *head) {
  return atomic_exchange_explicit(head, NULL, memory_order_acquire);
}

static block *alloc_block(long me) {
  heap *h = &heaps[me];
  if (!h->local) { /* drain the remote frees */
    block *b = take_all(&h->remote);
    while (b) {
      block *n = atomic_load_explicit(&b->next, memory_order_relaxed);
      atomic_store_explicit(&b->next, h->local, memory_order_relaxed);
      h->local = b;
      h->nlocal++;
      b = n;
    }
  }
  block *b = h->local;
  if (!b) return NULL;
  h->local = atomic_load_explicit(&b->next, memory_order_relaxed);
  h->nlocal--;
  atomic_store_explicit(&b->header, (uint64_t)me << 32 | 1, memory_order_relaxed);
  return b;
}

static void free_block(long me, block *b) {
  uint64_t hd = atomic_load_explicit(&b->header, memory_order_relaxed);
  long owner = (long)(hd >> 32);
  if ((hd & 1) != 1 || owner < 0 || owner >= nthreads) {
    atomic_fetch_add_explicit(&bad, 1, memory_order_relaxed);
    return;
  }
  atomic_store_explicit(&b->header, (uint64_t)owner << 32, memory_order_relaxed);
  if (owner == me) {
    atomic_store_explicit(&b->next, heaps[me].local, memory_order_relaxed);
    heaps[me].local = b;
    heaps[me].nlocal++;
  } else {
    push(&heaps[owner].remote, b);
  }
  atomic_fetch_sub_explicit(&outstanding, 1, memory_order_relaxed);
}

static void receive(long me) {
  block *b = take_all(&heaps[me].inbox);
  while (b) {
    block *n = atomic_load_explicit(&b->next, memory_order_relaxed);
    uint64_t tag = b->payload[0];
    for (int i = 1; i < 6; i++)
      if (b->payload[i] != tag + (uint64_t)i) atomic_fetch_add_explicit(&bad, 1, memory_order_relaxed);
    free_block(me, b);
    b = n;
  }
}

static void *body(void *arg) {
  long me = (long)(intptr_t)arg;
  uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(me + 1);
  for (long r = 0; r < rounds; r++) {
    for (long i = 0; i < nblocks / 2; i++) {
      block *b = alloc_block(me);
      while (!b) { /* every block is out: wait for frees */
        receive(me);
        sched_yield();
        b = alloc_block(me);
      }
      atomic_fetch_add_explicit(&outstanding, 1, memory_order_relaxed);
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      for (int k = 0; k < 6; k++) b->payload[k] = x + (uint64_t)k;
      long to = (me + 1 + (long)(x % (uint64_t)(nthreads - 1))) % nthreads;
      push(&heaps[to].inbox, b);
      if ((i & 15) == 15) receive(me);
    }
    receive(me);
  }
  atomic_fetch_add_explicit(&finished, 1, memory_order_release);
  /* stay to free what others send until every thread is done and every block is back */
  while (atomic_load_explicit(&finished, memory_order_acquire) < nthreads ||
         atomic_load_explicit(&outstanding, memory_order_relaxed) > 0) {
    receive(me);
    sched_yield();
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: allocator NTHREADS BLOCKS_PER_THREAD ROUNDS\n");
    return 2;
  }
  nthreads = atol(argv[1]);
  nblocks = atol(argv[2]);
  rounds = atol(argv[3]);
  if (nthreads < 2 || nblocks < 2 || rounds < 1) return 2;
  heaps = calloc((size_t)nthreads, sizeof *heaps);
  for (long t = 0; t < nthreads; t++) {
    heaps[t].blocks = calloc((size_t)nblocks, sizeof(block));
    for (long i = 0; i < nblocks; i++) {
      block *b = &heaps[t].blocks[i];
      atomic_store_explicit(&b->header, (uint64_t)t << 32, memory_order_relaxed);
      atomic_store_explicit(&b->next, heaps[t].local, memory_order_relaxed);
      heaps[t].local = b;
    }
    heaps[t].nlocal = nblocks;
  }
  pthread_t *th = calloc((size_t)nthreads, sizeof *th);
  for (long t = 0; t < nthreads; t++) pthread_create(&th[t], NULL, body, (void *)(intptr_t)t);
  for (long t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
  long home = 0;
  for (long t = 0; t < nthreads; t++) {
    receive(t);
    block *b = take_all(&heaps[t].remote);
    long n = heaps[t].nlocal;
    for (; b; b = atomic_load_explicit(&b->next, memory_order_relaxed)) n++;
    home += n;
  }
  if (home != nthreads * nblocks || atomic_load(&bad)) {
    printf("FAIL home=%ld of %ld bad=%ld\n", home, nthreads * nblocks, (long)atomic_load(&bad));
    return 1;
  }
  printf("ok allocator threads=%ld blocks=%ld atomics=%ld\n", nthreads, nthreads * nblocks,
         2 * nthreads * nblocks + 2 * nthreads);
  return 0;
}

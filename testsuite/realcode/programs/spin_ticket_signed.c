/* A packed ticket lock written as Concurrency Kit's (both counters in one word, the wait on the
 * low half kept in a local across the back edge: a stack slot at -O0) protecting a plain
 * counter, and a completion byte waited for as a signed char (`!= -1`). Both waits are
 * recognised (passes/spinloops.py, spinsigned.py); the program is robust and race-free. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define THREADS 3
#define ROUNDS 50
static atomic_uint ticket;  /* next ticket in the high half, now serving in the low half */
static atomic_uint done;    /* low byte 0xff once every worker has finished */
static atomic_int finished;
static long counter;

static void lock(void) {
  unsigned r = atomic_fetch_add_explicit(&ticket, 0x10000u, memory_order_acquire);
  unsigned t = r >> 16, pos = r & 0xffff;
  while (pos != t) {
    __builtin_ia32_pause();
    pos = atomic_load_explicit(&ticket, memory_order_acquire) & 0xffff;
  }
}

static void unlock(void) { atomic_fetch_add_explicit(&ticket, 1u, memory_order_release); }

static void *worker(void *arg) {
  for (int i = 0; i < ROUNDS; i++) {
    lock();
    counter++;
    unlock();
  }
  if (atomic_fetch_add(&finished, 1) == THREADS - 1) atomic_store_explicit(&done, 0xff, memory_order_release);
  return arg;
}

int main(void) {
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], 0, worker, 0);
  while ((signed char)atomic_load_explicit(&done, memory_order_acquire) != -1) __builtin_ia32_pause();
  long seen = counter;
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
  printf("%s %ld\n", seen == THREADS * ROUNDS ? "ok" : "bad", seen);
  return seen == THREADS * ROUNDS ? 0 : 1;
}

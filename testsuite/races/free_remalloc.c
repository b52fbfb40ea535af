// race: no
// robust: yes
// env: GLIBC_TUNABLES=glibc.malloc.tcache_count=0:glibc.malloc.arena_max=1
// reason: memory freed by one thread and returned by malloc to another is a new object; only a relaxed flag (no synchronisation) orders the two threads in time, malloc's own locks are invisible to the detector
// A block written and freed by one thread, then re-allocated and written by another.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_uintptr_t freed;
static atomic_int go; /* relaxed: no synchronisation, only keeps main's allocations out of the way */

static void *first(void *arg) {
  while (!atomic_load_explicit(&go, memory_order_relaxed)) {
  }
  long *p = malloc(64);
  for (int i = 0; i < 8; i++) p[i] = i;
  free(p);
  atomic_store_explicit(&freed, (uintptr_t)p, memory_order_relaxed);
  return arg;
}

static void *second(void *arg) {
  uintptr_t old;
  while ((old = atomic_load_explicit(&freed, memory_order_relaxed)) == 0) {
  }
  /* malloc hands the freed block out again (LIFO bins, one arena, no thread cache: see
   * env); take blocks until it comes back */
  long *taken[64], *q = malloc(64);
  int n = 0;
  while (q != (long *)old && n < 64) {
    taken[n++] = q;
    q = malloc(64);
  }
  for (int i = 0; i < 8; i++) q[i] = -i;
  printf("%s\n", (uintptr_t)q == old ? "reused" : "not reused");
  free(q);
  while (n) free(taken[--n]);
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, first, NULL);
  pthread_create(&b, NULL, second, NULL);
  atomic_store_explicit(&go, 1, memory_order_relaxed);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}

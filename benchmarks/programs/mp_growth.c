/* Memory-growth program: message passing (release/acquire) after K relaxed writes to
 * another atomic. With a runtime whose memory does not grow with the length of the run,
 * peak RSS is the same for K = 10 and K = 10^7.
 *
 * usage: mp_growth K      prints "ok <K> <data>" or "mismatch ..." (exit 1) */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_long noise; /* the "another atomic" written K times */
static atomic_int data;
static atomic_int flag;
static long k_writes;
static int seen;

static void *writer(void *arg) {
  (void)arg;
  for (long i = 1; i <= k_writes; i++)
    atomic_store_explicit(&noise, i, memory_order_relaxed);
  atomic_store_explicit(&data, 42, memory_order_relaxed);
  atomic_store_explicit(&flag, 1, memory_order_release);
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  int spins = 0;
  while (!atomic_load_explicit(&flag, memory_order_acquire))
    if (++spins % 16 == 0) sched_yield();
  seen = atomic_load_explicit(&data, memory_order_relaxed);
  return NULL;
}

int main(int argc, char **argv) {
  k_writes = argc > 1 ? atol(argv[1]) : 10;
  pthread_t w, r;
  pthread_create(&r, NULL, reader, NULL);
  pthread_create(&w, NULL, writer, NULL);
  pthread_join(w, NULL);
  pthread_join(r, NULL);
  long last = atomic_load_explicit(&noise, memory_order_relaxed);
  if (seen != 42 || last != k_writes) {
    printf("mismatch %d %ld\n", seen, last);
    return 1;
  }
  printf("ok %ld %d\n", k_writes, seen);
  return 0;
}

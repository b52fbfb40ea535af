// robust: yes
// race: yes
// reason: main waits for each ready flag with a relaxed load: reading the flag does not synchronise with the worker's release store, so main's read of the plain result races with the worker's write; the atomics alone stay SC (a fetch_add counter and one flag per slot, each written once)
// Heap result slots whose ready flags are polled with relaxed loads: the results race.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define JOBS 6
static long *results;
static atomic_int *ready;
static atomic_int next_job;

static void *worker(void *arg) {
  (void)arg;
  for (;;) {
    int j = atomic_fetch_add_explicit(&next_job, 1, memory_order_relaxed);
    if (j >= JOBS) return NULL;
    results[j] = (long)j * j;
    atomic_store_explicit(&ready[j], 1, memory_order_release);
  }
}

int main(void) {
  results = calloc(JOBS, sizeof *results);
  ready = calloc(JOBS, sizeof *ready);
  pthread_t t[3];
  for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, worker, NULL);
  long sum = 0;
  for (int j = 0; j < JOBS; j++) {
    while (!atomic_load_explicit(&ready[j], memory_order_relaxed)) {
    }
    sum += results[j];
  }
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  printf("%ld\n", sum);
  free(results);
  free((void *)ready);
  return sum == 55 ? 0 : 1;
}

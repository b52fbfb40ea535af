/* Benchmark program dominated by non-atomic accesses (issue 4): THREADS threads each work on
 * private heap arrays (a scalar update loop, a memcpy, a summing loop) reading a shared
 * read-only input, and add each round's result to a shared total under a mutex. Race-free.
 *
 *   private_arrays ROUNDS      -> prints "ok total=<n>" when the total is the expected one
 *
 * Per round and thread: N reads of the shared input, N read-modify-writes of the private
 * array, one N*8-byte memcpy, N reads of the copy, one lock/unlock. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define N 4096

static uint64_t input[N];
static uint64_t total;
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;
static long rounds;

static void *worker(void *arg) {
  (void)arg;
  uint64_t *a = malloc(N * sizeof *a);
  uint64_t *copy = malloc(N * sizeof *copy);
  if (!a || !copy) abort();
  for (int i = 0; i < N; i++) a[i] = (uint64_t)i;
  for (long r = 1; r <= rounds; r++) {
    for (int i = 0; i < N; i++) a[i] += input[i];
    memcpy(copy, a, N * sizeof *a);
    uint64_t sum = 0;
    for (int i = 0; i < N; i++) sum += copy[i];
    pthread_mutex_lock(&total_lock);
    total += sum;
    pthread_mutex_unlock(&total_lock);
  }
  free(copy);
  free(a);
  return NULL;
}

int main(int argc, char **argv) {
  rounds = argc > 1 ? atol(argv[1]) : 1000;
  if (rounds < 1) rounds = 1;
  for (int i = 0; i < N; i++) input[i] = (uint64_t)(i & 7);
  pthread_t threads[THREADS];
  for (int t = 0; t < THREADS; t++)
    if (pthread_create(&threads[t], NULL, worker, NULL) != 0) abort();
  for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
  /* after round r, a[i] = i + r * (i & 7): each thread adds sum_r (S_i + r * S_7) */
  uint64_t s_i = (uint64_t)N * (N - 1) / 2, s_7 = (uint64_t)(N / 8) * 28;
  uint64_t r = (uint64_t)rounds;
  uint64_t expected = (uint64_t)THREADS * (r * s_i + r * (r + 1) / 2 * s_7);
  if (total != expected) {
    printf("FAIL total=%llu expected=%llu\n", (unsigned long long)total,
           (unsigned long long)expected);
    return 1;
  }
  printf("ok total=%llu\n", (unsigned long long)total);
  return 0;
}

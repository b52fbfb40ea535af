/* Threads working on private arrays, reading a shared input, adding their results to a
 * total under a mutex: no race, and the same output instrumented or not. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4
#define N 1000

static double input[N];
static double total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg) {
  long id = (long)arg;
  double *mine = malloc(N * sizeof *mine);   /* private, but on the heap: instrumented */
  for (int i = 0; i < N; i++) mine[i] = input[i] * (double)(id + 1);
  double sum = 0;
  for (int i = 0; i < N; i++) sum += mine[i];
  free(mine);
  pthread_mutex_lock(&lock);
  total += sum;
  pthread_mutex_unlock(&lock);
  return NULL;
}

int main(void) {
  for (int i = 0; i < N; i++) input[i] = i * 0.5;
  pthread_t threads[THREADS];
  for (long t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, worker, (void *)t);
  for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
  printf("total=%.1f\n", total);
  return 0;
}

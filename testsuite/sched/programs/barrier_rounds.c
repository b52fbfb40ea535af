/* Three threads, 40 rounds of: an atomic add, a barrier, a mutex + condition-variable round
 * count. Every modelled wait (barrier, cond, mutex, join) is live at some step, so a hand-over
 * at any step releases threads from each of them (docs/scheduling.md "Hand-over"). Prints the
 * totals; exits 1 if they are wrong. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define N 3
#define ROUNDS 40

static pthread_barrier_t bar;
static atomic_int sum;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int arrived;

static void *worker(void *arg) {
  (void)arg;
  for (int r = 0; r < ROUNDS; r++) {
    atomic_fetch_add(&sum, 1);
    pthread_barrier_wait(&bar);
    pthread_mutex_lock(&m);
    arrived++;
    pthread_cond_broadcast(&c);
    while (arrived < (r + 1) * N) pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
  }
  return NULL;
}

int main(void) {
  pthread_barrier_init(&bar, NULL, N);
  pthread_t t[N];
  for (int i = 0; i < N; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
  printf("sum %d arrived %d\n", atomic_load(&sum), arrived);
  return atomic_load(&sum) == N * ROUNDS && arrived == N * ROUNDS ? 0 : 1;
}

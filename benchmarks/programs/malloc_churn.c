/* malloc/free churn (session 15, QA): 4 threads x N malloc(32)/free pairs, one relaxed counter;
 * measures what tracking heap blocks costs when only robustness reports are on (--no-races). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
static atomic_long total;
static int *volatile sink[4];
static void *work(void *a) {
  long n = (long)a, s = 0;
  for (long i = 0; i < n; i++) {
    int *p = malloc(32);
    __asm__ volatile("" : : "r"(p) : "memory");
    p[0] = (int)i;
    s += p[0];
    free(p);
  }
  atomic_fetch_add_explicit(&total, s, memory_order_relaxed);
  return NULL;
}
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 200000;
  pthread_t t[4];
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, work, (void *)n);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  printf("%ld\n", atomic_load(&total));
  return 0;
}

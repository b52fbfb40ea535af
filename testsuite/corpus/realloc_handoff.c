// robust: yes
// race: no
// reason: the worker reallocs and fills the buffer before its release store; main reads and frees it after the acquire load
// Heap buffer grown with realloc in one thread, handed to another through release/acquire.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static int *buf;
static atomic_int n_ready;

static void *worker(void *arg) {
  (void)arg;
  int *p = malloc(2 * sizeof *p);
  p[0] = 1;
  p[1] = 2;
  p = realloc(p, 64 * sizeof *p);
  for (int i = 2; i < 64; i++)
    p[i] = i + 1;
  buf = p;
  atomic_store_explicit(&n_ready, 64, memory_order_release);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  int n;
  while (!(n = atomic_load_explicit(&n_ready, memory_order_acquire)))
    ;
  long s = 0;
  for (int i = 0; i < n; i++)
    s += buf[i];
  free(buf);
  pthread_join(t, NULL);
  printf("%ld\n", s);
  return s == 64 * 65 / 2 ? 0 : 1;
}

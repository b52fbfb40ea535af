/* MP whose flag read (line 19) brings the write SC requires into the reader's pending-acquire
 * view, followed by a relaxed read of an unrelated location (line 20): acquiring line 20 would
 * fix nothing; the acquire fence before line 21 does. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int data, flag, other;
static int r[3];

static void *writer(void *arg) {
  (void)arg;
  atomic_store_explicit(&data, 1, memory_order_relaxed);
  atomic_store_explicit(&flag, 1, memory_order_release);
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  r[0] = atomic_load_explicit(&flag, memory_order_relaxed);
  r[1] = atomic_load_explicit(&other, memory_order_relaxed);
  r[2] = atomic_load_explicit(&data, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t w, rd;
  atomic_store_explicit(&other, 5, memory_order_relaxed);
  pthread_create(&w, NULL, writer, NULL);
  pthread_create(&rd, NULL, reader, NULL);
  pthread_join(w, NULL);
  pthread_join(rd, NULL);
  printf("%d %d %d\n", r[0], r[1], r[2]);
  return 0;
}

// race: yes
// robust: yes
// reason: freeing a block is a write of all of it; the worker's write is not ordered before the free (only a relaxed flag tells main it happened)
// A heap block freed by main while a worker's write to it does not happen before the free.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static long *block;
static atomic_int written;

static void *worker(void *arg) {
  block[2] = 7; // pyrsan: race
  atomic_store_explicit(&written, 1, memory_order_relaxed);
  return arg;
}

int main(void) {
  pthread_t t;
  block = malloc(8 * sizeof *block);
  pthread_create(&t, NULL, worker, NULL);
  while (!atomic_load_explicit(&written, memory_order_relaxed)) {
  }
  free(block); // pyrsan: race
  pthread_join(t, NULL);
  printf("done\n");
  return 0;
}

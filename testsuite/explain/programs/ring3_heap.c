// Three threads in a ring (not a litmus test the explanation was written for): thread i
// publishes cell[i] with a release store, then reads cell[i+1 mod 3] with an acquire load,
// through small helper functions; the cells are on the heap. Release/acquire does not forbid
// all three loads reading 0 (a cycle fr;po;fr;po;fr;po), which SC does.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_int *cell;
static int seen[3];

static void publish(int i) { atomic_store_explicit(&cell[i], 1, memory_order_release); }

static int peek(int i) { return atomic_load_explicit(&cell[i], memory_order_acquire); }

static void *worker(void *arg) {
  int i = (int)(long)arg;
  publish(i);
  seen[i] = peek((i + 1) % 3);
  return NULL;
}

int main(void) {
  cell = calloc(3, sizeof *cell);
  pthread_t th[3];
  for (long i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, worker, (void *)i);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("%d %d %d\n", seen[0], seen[1], seen[2]);
  free(cell);
  return 0;
}

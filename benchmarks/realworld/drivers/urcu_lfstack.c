/* liburcu (liburcu-dev): lfstack, the lock-free stack (push: CAS loop; pop: CAS under the
 * stack's mutex), inline with _LGPL_SOURCE. 3 threads pop and push back preallocated
 * nodes. Checks that no node is lost. */
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#define _LGPL_SOURCE
#include <urcu/lfstack.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS (SMALL ? 2 : 3)
#define NODES (SMALL ? 2 : 32)
#define ROUNDS (SMALL ? 2 : 500)
struct item {
  struct cds_lfs_node node;
  long value;
};
static struct cds_lfs_stack stack;
static struct item items[NODES];

static void *worker(void *arg) {
  long sum = 0;
  for (int i = 0; i < ROUNDS; i++) {
    struct cds_lfs_node *n = cds_lfs_pop_blocking(&stack);
    if (n != NULL) {
      struct item *it = caa_container_of(n, struct item, node);
      sum += it->value; /* plain read, published by the push */
      it->value++;      /* plain write, published by the next push */
      cds_lfs_push(&stack, n);
    }
  }
  return (void *)sum;
}

int main(void) {
  cds_lfs_init(&stack);
  for (int i = 0; i < NODES; i++) {
    cds_lfs_node_init(&items[i].node);
    cds_lfs_push(&stack, &items[i].node);
  }
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], 0, worker, 0);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
  int n = 0;
  while (cds_lfs_pop_blocking(&stack) != NULL) n++;
  cds_lfs_destroy(&stack);
  printf("%s %d\n", (n == NODES) ? "ok" : "bad", n);
  return (n == NODES) ? 0 : 1;
}

/* A Treiber stack whose head is a (pointer, generation) pair swapped with a 16-byte CAS
 * (DCAS), the ABA-safe design of lock-free libraries; plus a 24-byte atomic struct (libatomic
 * generic calls). Nodes are preallocated and recycled, as such stacks do. Correct and robust
 * with seq_cst operations; the program checks that no node is lost or duplicated. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define THREADS 3
#define NODES 64
#define ROUNDS 300

struct node {
  /* atomic: pop reads the next field of a node another thread may pop and push meanwhile
   * (the DCAS then fails); a plain field would be a real data race */
  _Atomic(struct node *) next;
  int owner;
};
typedef struct {
  struct node *top;
  uintptr_t gen;
} head_t;
typedef struct {
  long pushes, pops, last;
} stats_t;

static _Atomic head_t head;
static _Atomic stats_t stats;
static struct node nodes[NODES];

static void push(struct node *n) {
  head_t old = atomic_load(&head), nw;
  do {
    atomic_store_explicit(&n->next, old.top, memory_order_relaxed);
    nw.top = n;
    nw.gen = old.gen + 1;
  } while (!atomic_compare_exchange_weak(&head, &old, nw));
}

static struct node *pop(void) {
  head_t old = atomic_load(&head), nw;
  do {
    if (old.top == NULL) return NULL;
    nw.top = atomic_load_explicit(&old.top->next, memory_order_relaxed);
    nw.gen = old.gen + 1;
  } while (!atomic_compare_exchange_weak(&head, &old, nw));
  return old.top;
}

static void count(int pushed) {
  stats_t s = atomic_load(&stats), n;
  do {
    n = s;
    if (pushed) n.pushes++;
    else n.pops++;
    n.last = pushed;
  } while (!atomic_compare_exchange_strong(&stats, &s, n));
}

static void *worker(void *arg) {
  (void)arg;
  for (int r = 0; r < ROUNDS; r++) {
    struct node *n = pop();
    if (n) {
      count(0);
      push(n);
      count(1);
    }
  }
  return NULL;
}

int main(void) {
  for (int i = 0; i < NODES; i++) push(&nodes[i]);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], 0, worker, 0);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
  int seen = 0;
  for (struct node *n = atomic_load(&head).top; n && seen <= NODES; n = atomic_load(&n->next)) seen++;
  stats_t s = atomic_load(&stats);
  printf("nodes %d pushes %ld pops %ld\n", seen, s.pushes, s.pops);
  return seen == NODES && s.pushes == s.pops ? 0 : 1;
}

// robust: yes
// race: no
// reason: hazard pointers with seq_cst hazard store, head re-read, exchange and hazard read: SC accesses are fenced, so the store-buffering pair cannot both read stale values; the recycled node is never read by the reader (in SC, a reader that validated its hazard is seen by the writer)
// Hazard pointer protecting a node that the writer unlinks and recycles (one reader, one writer), seq_cst on the hazard protocol.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

struct node {
  int val;
};
static struct node nodes[2] = {{1}, {2}};
static _Atomic(struct node *) head = &nodes[0];
static _Atomic(struct node *) hazard;
static int seen, recycled;

static void *reader(void *arg) {
  (void)arg;
  struct node *p;
  do {
    p = atomic_load_explicit(&head, memory_order_seq_cst);
    atomic_store_explicit(&hazard, p, memory_order_seq_cst);
  } while (p != atomic_load_explicit(&head, memory_order_seq_cst));
  seen = p->val;
  atomic_store_explicit(&hazard, NULL, memory_order_seq_cst);
  return NULL;
}

static void *writer(void *arg) {
  (void)arg;
  struct node *old = atomic_exchange_explicit(&head, &nodes[1], memory_order_seq_cst);
  if (atomic_load_explicit(&hazard, memory_order_seq_cst) != old) {
    old->val = -1; /* recycled: no reader holds it */
    recycled = 1;
  }
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, reader, NULL);
  pthread_create(&b, NULL, writer, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("seen %d recycled %d\n", seen, recycled);
  return 0;
}

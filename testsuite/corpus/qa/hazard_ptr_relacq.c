// robust: no
// race: no
// reason: hazard pointers need a store-load fence: the reader's hazard store (release) and re-read of head (acquire) against the writer's exchange of head and read of the hazard slot form store buffering; both reads may be stale
// Hazard pointer protecting a node that the writer unlinks and recycles (one reader, one writer), release/acquire only.
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
    p = atomic_load_explicit(&head, memory_order_acquire); // pyrsan: violation
    atomic_store_explicit(&hazard, p, memory_order_release); // pyrsan: stale
  } while (p != atomic_load_explicit(&head, memory_order_acquire)); // pyrsan: violation
  seen = p->val;
  atomic_store_explicit(&hazard, NULL, memory_order_release); // pyrsan: stale
  return NULL;
}

static void *writer(void *arg) {
  (void)arg;
  struct node *old = atomic_exchange_explicit(&head, &nodes[1], memory_order_acq_rel); // pyrsan: stale
  if (atomic_load_explicit(&hazard, memory_order_acquire) != old) { // pyrsan: violation
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

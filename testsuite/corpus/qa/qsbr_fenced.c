// robust: yes
// race: no
// reason: quiescent-state reclamation with SC fences on both sides of the store-buffering pair (reader: announce active, fence, read the pointer; writer: swap the pointer, fence, read the announcement), so a writer that sees the reader inactive knows the reader will read the new pointer; the wait for inactivity is an acquire of the reader's release
// Epoch/QSBR-style reclamation: one reader announces itself active around its use of a shared pointer, the writer swaps the pointer and waits until the reader is quiescent before recycling the old object.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

struct obj {
  int payload;
};
static struct obj objs[2] = {{10}, {20}};
static _Atomic(struct obj *) current = &objs[0];
static atomic_int active;
static int got;

static void *reader(void *arg) {
  (void)arg;
  atomic_store_explicit(&active, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  struct obj *o = atomic_load_explicit(&current, memory_order_acquire);
  got = o->payload;
  atomic_store_explicit(&active, 0, memory_order_release);
  return NULL;
}

static void *writer(void *arg) {
  (void)arg;
  struct obj *old = atomic_exchange_explicit(&current, &objs[1], memory_order_acq_rel);
  atomic_thread_fence(memory_order_seq_cst);
  while (atomic_load_explicit(&active, memory_order_acquire))
    ;
  old->payload = -1; /* recycle */
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, reader, NULL);
  pthread_create(&b, NULL, writer, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("got %d\n", got);
  return 0;
}

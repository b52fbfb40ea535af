// robust: no
// race: no
// reason: quiescent-state reclamation without the SC fences: announce-then-read against swap-then-check is store buffering under release/acquire; the reader may read the old pointer while the writer reads the stale inactive announcement
// Epoch/QSBR-style reclamation without fences: one reader announces itself active around its use of a shared pointer, the writer swaps the pointer and waits until the reader is quiescent before recycling the old object.
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
  atomic_store_explicit(&active, 1, memory_order_relaxed); // pyrsan: stale
  struct obj *o = atomic_load_explicit(&current, memory_order_acquire); // pyrsan: violation
  got = o->payload;
  atomic_store_explicit(&active, 0, memory_order_release);
  return NULL;
}

static void *writer(void *arg) {
  (void)arg;
  struct obj *old = atomic_exchange_explicit(&current, &objs[1], memory_order_acq_rel); // pyrsan: stale
  while (atomic_load_explicit(&active, memory_order_acquire)) // pyrsan: violation
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

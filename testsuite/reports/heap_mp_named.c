/* Message passing through a heap struct with relaxed accesses: the robustness report's
 * location, stale write and suggestion name the heap block by its allocation site and offset
 * (docs/reports.md §3), never by a bare address. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct msg {
  atomic_int data;
  atomic_int flag;
};
struct msg *m;
int r1, r2;

void *writer(void *a) {
  (void)a;
  atomic_store_explicit(&m->data, 1, memory_order_relaxed);
  atomic_store_explicit(&m->flag, 1, memory_order_relaxed);
  return 0;
}

void *reader(void *a) {
  (void)a;
  r1 = atomic_load_explicit(&m->flag, memory_order_relaxed);
  r2 = atomic_load_explicit(&m->data, memory_order_relaxed);
  return 0;
}

int main(void) {
  m = malloc(sizeof *m); /* line 30 */
  atomic_init(&m->data, 0);
  atomic_init(&m->flag, 0);
  pthread_t a, b;
  pthread_create(&a, 0, writer, 0);
  pthread_create(&b, 0, reader, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  free(m);
  return 0;
}

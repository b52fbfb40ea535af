// robust: no
// race: no
// reason: R shape: T2's release store y=2 mo-after T1's y=1 and T2's acquire load of x may still read 0 (no SC fence between T2's store and load)
// R shape on 16-bit atomics in a heap-allocated struct, release stores, acquire load.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct shared {
  char pad;
  _Atomic uint16_t x;
  _Atomic uint16_t y;
};
static struct shared *s;
static int r;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&s->x, 1, memory_order_relaxed); // pyrsan: stale
  atomic_store_explicit(&s->y, 1, memory_order_release); // pyrsan: violation
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&s->y, 2, memory_order_release); // pyrsan: violation
  r = atomic_load_explicit(&s->x, memory_order_acquire); // pyrsan: violation
  return NULL;
}

int main(void) {
  s = calloc(1, sizeof *s);
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("r=%d y=%d\n", r, (int)atomic_load(&s->y));
  free(s);
  return 0;
}

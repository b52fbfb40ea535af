// robust: yes
// race: no
// reason: a seq_cst fetch_add(z, 0) between each thread's store and load acts as an SC fence (fenced model) and the two RMWs on z are ordered
// SB where each thread separates its relaxed store and load by a seq_cst RMW on a third location.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y, z;
static int r0, r1;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&z, 0, memory_order_seq_cst);
  r0 = atomic_load_explicit(&y, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&z, 0, memory_order_seq_cst);
  r1 = atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("r0=%d r1=%d\n", r0, r1);
  return 0;
}

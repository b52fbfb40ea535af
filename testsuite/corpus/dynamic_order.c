// robust: no
// race: no
// reason: SB where the memory orders are run-time values (release stores, acquire loads): clang lowers each access to a switch over orders
// Store buffering with non-constant memory_order arguments.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r0, r1;
static memory_order st_order = memory_order_release, ld_order = memory_order_acquire;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, st_order); // pyrsan: stale
  r0 = atomic_load_explicit(&y, ld_order); // pyrsan: violation
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, st_order); // pyrsan: stale
  r1 = atomic_load_explicit(&x, ld_order); // pyrsan: violation
  return NULL;
}

int main(int argc, char **argv) {
  (void)argv;
  if (argc > 5)
    st_order = ld_order = memory_order_seq_cst;
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("r0=%d r1=%d\n", r0, r1);
  return 0;
}

// robust: yes
// race: no
// reason: __sync builtins are seq_cst (full barriers): __sync_synchronize between store and load in both threads
// SB with the legacy __sync builtins: __sync_lock_test_and_set stores, __sync_synchronize, __sync_fetch_and_add(,0) loads.
#include <pthread.h>
#include <stdio.h>

static int x, y;
static int r0, r1;

static void *t1(void *arg) {
  (void)arg;
  __sync_lock_test_and_set(&x, 1);
  __sync_synchronize();
  r0 = __sync_fetch_and_add(&y, 0);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  __sync_lock_test_and_set(&y, 1);
  __sync_synchronize();
  r1 = __sync_fetch_and_add(&x, 0);
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

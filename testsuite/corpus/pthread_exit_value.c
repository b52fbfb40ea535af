// robust: yes
// race: no
// reason: the thread's writes before pthread_exit happen before pthread_join returns
// pthread_exit from a nested call, result read after join.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static int data;
static atomic_int flag;

static void finish(void) {
  data = 7;
  atomic_store_explicit(&flag, 1, memory_order_relaxed);
  pthread_exit((void *)3);
}

static void *work(void *arg) {
  (void)arg;
  finish();
  return NULL;
}

int main(void) {
  pthread_t t;
  void *rv;
  pthread_create(&t, NULL, work, NULL);
  pthread_join(t, &rv);
  printf("%d %ld %d\n", data, (long)rv, atomic_load_explicit(&flag, memory_order_relaxed));
  return 0;
}

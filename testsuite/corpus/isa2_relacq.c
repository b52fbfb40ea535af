// robust: yes
// race: no
// reason: ISA2 with release/acquire on both flags: happens-before is transitive, so reading z=1 makes T1's x=1 visible
// ISA2: three threads, message passed through two release/acquire flags; payload is a plain int.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static int data;
static atomic_int y, z;
static int seen = -1;

static void *t1(void *arg) {
  (void)arg;
  data = 42;
  atomic_store_explicit(&y, 1, memory_order_release);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  if (atomic_load_explicit(&y, memory_order_acquire))
    atomic_store_explicit(&z, 1, memory_order_release);
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  if (atomic_load_explicit(&z, memory_order_acquire))
    seen = data;
  return NULL;
}

int main(void) {
  pthread_t th[3];
  void *(*fn[3])(void *) = {t1, t2, t3};
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("seen=%d\n", seen);
  return 0;
}

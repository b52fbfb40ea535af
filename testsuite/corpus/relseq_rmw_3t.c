// robust: yes
// race: no
// reason: a relaxed fetch_add continues T1's release sequence: reading y=1 or y=2 with acquire synchronises with T1, so the payload is visible
// Release sequence through a relaxed RMW by a third thread; plain payload read after an acquire load.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static int payload;
static atomic_int y;
static int seen = -1;

static void *t1(void *arg) {
  (void)arg;
  payload = 7;
  atomic_store_explicit(&y, 1, memory_order_release);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_fetch_add_explicit(&y, 1, memory_order_relaxed);
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  int v = atomic_load_explicit(&y, memory_order_acquire);
  if (v == 2) // only T2's increment of T1's 1 makes 2: in T1's release sequence
    seen = payload;
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

// robust: yes
// race: no
// reason: threads claim slots with fetch_add on an atomic pointer (one location, RMWs only); each writes its own slot; main reads after join
// Slot allocation by atomic_fetch_add on an _Atomic(int *) cursor.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static int slots[8];
static _Atomic(int *) cursor = slots;

static void *work(void *arg) {
  for (int i = 0; i < 2; i++) {
    int *mine = atomic_fetch_add_explicit(&cursor, 1, memory_order_relaxed);
    *mine = (int)(long)arg;
  }
  return NULL;
}

int main(void) {
  pthread_t th[3];
  for (long i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, work, (void *)(i + 1));
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  int s = 0;
  for (int i = 0; i < 8; i++)
    s += slots[i];
  printf("%d\n", s);
  return s == 12 ? 0 : 1;
}

// Dekker's mutual exclusion for 2 threads, one critical section each.
// Release/acquire: not robust (both threads may read the other's flag as 0); -DROBUST: fenced.
#include <pthread.h>
#include <stdint.h>
#include "order.h"

atomic_int flag[2], turn, in_cs;

static void *thread(void *arg) {
  int me = (int)(intptr_t)arg, other = 1 - me;
  store(&flag[me], 1);
  fence();
  while (load(&flag[other])) {
    if (load(&turn) != me) {
      store(&flag[me], 0);
      fence();
      while (load(&turn) != me)
        ;
      store(&flag[me], 1);
      fence();
    }
  }
  atomic_fetch_add_explicit(&in_cs, 1, memory_order_relaxed); /* critical section */
  store(&turn, other);
  store(&flag[me], 0);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  for (intptr_t i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, thread, (void *)i);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  return 0;
}

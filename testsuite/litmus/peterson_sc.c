// robust: yes
// race: no
// reason: all accesses seq_cst (fenced model: an SC fence around each), which makes every access SC-ordered
// Peterson's lock with the default seq_cst atomic_load/atomic_store.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

atomic_int flag[2], turn, counter;

static void *thread(void *arg) {
  int me = (int)(intptr_t)arg, other = 1 - me;
  atomic_store(&flag[me], 1);
  atomic_store(&turn, other);
  while (atomic_load(&flag[other]) == 1 &&
         atomic_load(&turn) == other)
    ;
  atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed); /* critical section */
  atomic_store(&flag[me], 0);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  for (intptr_t i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, thread, (void *)i);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  printf("counter=%d\n", atomic_load_explicit(&counter, memory_order_relaxed));
  return 0;
}

// model-none: the waiting loop leaves on a condition over two locations (flag and turn), which neither a wait nor the straight-line model expresses

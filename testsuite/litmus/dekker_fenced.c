// robust: yes
// race: no
// reason: an SC fence after each flag store orders it before the flag load (Rocker submission/ra/dekker-ra.tpl: robust under ra)
// Dekker's mutual exclusion, release/acquire, with atomic_thread_fence(seq_cst) after each flag store.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

atomic_int flag[2], turn, counter;

static void *thread(void *arg) {
  int me = (int)(intptr_t)arg, other = 1 - me;
  for (;;) {
    atomic_store_explicit(&flag[me], 1, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    int o = atomic_load_explicit(&flag[other], memory_order_acquire);
    int retry = 0;
    while (o == 1) {
      if (atomic_load_explicit(&turn, memory_order_acquire) != me) {
        atomic_store_explicit(&flag[me], 0, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
        while (atomic_load_explicit(&turn, memory_order_acquire) != me)
          ;
        retry = 1;
        break;
      }
      o = atomic_load_explicit(&flag[other], memory_order_acquire);
    }
    if (!retry)
      break;
  }
  atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed); /* critical section */
  atomic_store_explicit(&turn, other, memory_order_release);
  atomic_store_explicit(&flag[me], 0, memory_order_release);
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

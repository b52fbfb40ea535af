// robust: yes
// race: no
// reason: the turn update is an acq_rel exchange: RMWs on turn are totally ordered and synchronise (Rocker peterson-ra.tpl: robust under ra and rlx)
// Peterson's lock where turn is written with atomic_exchange (acq_rel); release flag stores, acquire loads.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

atomic_int flag[2], turn, counter;

static void *thread(void *arg) {
  int me = (int)(intptr_t)arg, other = 1 - me;
  atomic_store_explicit(&flag[me], 1, memory_order_release);
  atomic_exchange_explicit(&turn, other, memory_order_acq_rel);
  while (atomic_load_explicit(&flag[other], memory_order_acquire) == 1 &&
         atomic_load_explicit(&turn, memory_order_acquire) == other)
    ;
  atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed); /* critical section */
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

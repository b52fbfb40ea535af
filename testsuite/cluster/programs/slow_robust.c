/* A robust program that takes a while (a counter bumped by acq_rel RMWs, then a short
 * sleep): long enough to kill a worker or the scheduler under it. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

atomic_int counter;

static void *bump(void *arg) {
  for (int i = 0; i < 20; i++) atomic_fetch_add_explicit(&counter, 1, memory_order_acq_rel);
  return arg;
}

int main(void) {
  pthread_t t, u;
  pthread_create(&t, NULL, bump, NULL);
  pthread_create(&u, NULL, bump, NULL);
  pthread_join(t, NULL);
  pthread_join(u, NULL);
  usleep(300 * 1000);
  printf("%d\n", atomic_load_explicit(&counter, memory_order_acquire));
  return 0;
}

/* Message passing with release/acquire and a third thread bumping a counter: robust. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int data, flag, counter;
int seen_flag, seen_data, seen_flag3;

static void *producer(void *arg) {
  atomic_store_explicit(&data, 42, memory_order_relaxed);
  atomic_store_explicit(&flag, 1, memory_order_release);
  return arg;
}

static void *consumer(void *arg) {
  seen_flag = atomic_load_explicit(&flag, memory_order_acquire);
  if (seen_flag) seen_data = atomic_load_explicit(&data, memory_order_relaxed);
  return arg;
}

static void *bystander(void *arg) {
  atomic_fetch_add_explicit(&counter, 1, memory_order_acq_rel);
  seen_flag3 = atomic_load_explicit(&flag, memory_order_acquire);
  return arg;
}

int main(void) {
  pthread_t p, c, b;
  pthread_create(&p, NULL, producer, NULL);
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&b, NULL, bystander, NULL);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  pthread_join(b, NULL);
  printf("%d %d %d\n", seen_flag, seen_data, seen_flag3);
  return 0;
}

// robust: yes
// race: yes
// reason: memset (plain writes) of an array of atomics while another thread loads one element atomically: a plain write and an atomic read of one location without happens-before race
// memset over atomics racing with an atomic load.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_int slots[8];

static void *reader(void *arg) {
  (void)arg;
  return (void *)(long)atomic_load_explicit(&slots[3], memory_order_acquire);
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  memset(slots, 0xff, sizeof slots);
  void *r;
  pthread_join(t, &r);
  printf("%ld\n", (long)r);
  return 0;
}

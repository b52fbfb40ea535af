#include <pthread.h>
#include <stdio.h>

#include "channel.h"

void *producer(void *arg);

static void *consumer(void *arg) {
  (void)arg;
  int v = -1;
  channel_try_recv(&chan, &v);
  return (void *)(long)v;
}

int main(void) {
  pthread_t p, c;
  void *got;
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&p, NULL, producer, NULL);
  pthread_join(p, NULL);
  pthread_join(c, &got);
  printf("%ld\n", (long)got);
  return 0;
}

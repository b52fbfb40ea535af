#include <pthread.h>

#include "channel.h"

void *producer(void *arg) {
  (void)arg;
  channel_send(&chan, 42);
  return NULL;
}

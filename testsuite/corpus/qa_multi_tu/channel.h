#ifndef CHANNEL_H
#define CHANNEL_H
#include <stdatomic.h>

struct channel {
  atomic_int seq;
  atomic_int value;
};

extern struct channel chan;
void channel_send(struct channel *c, int v);
int channel_try_recv(struct channel *c, int *out);
#endif

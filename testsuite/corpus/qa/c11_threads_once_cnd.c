// robust: yes
// race: no
// reason: C11 <threads.h>: call_once's function happens before every return from call_once; the queue is guarded by mtx_t, consumers wait on cnd_t in a loop; thrd_join orders the final reads; the relaxed statistics counter is only ever updated with RMWs (one location)
// C11 threads: call_once initialisation, a mutex/condition-variable queue of ints, thrd_create/thrd_join, two producers and one consumer.
#include <stdatomic.h>
#include <stdio.h>
#include <threads.h>

static once_flag once = ONCE_FLAG_INIT;
static mtx_t m;
static cnd_t nonempty;
static int queue[4], count;
static int limit;
static atomic_int pushed;

static void init(void) {
  mtx_init(&m, mtx_plain);
  cnd_init(&nonempty);
  limit = 4;
}

static int producer(void *arg) {
  call_once(&once, init);
  mtx_lock(&m);
  if (count < limit) queue[count++] = (int)(long)arg;
  cnd_signal(&nonempty);
  mtx_unlock(&m);
  atomic_fetch_add_explicit(&pushed, 1, memory_order_relaxed);
  return 0;
}

static int consumer(void *arg) {
  (void)arg;
  call_once(&once, init);
  int sum = 0;
  for (int got = 0; got < 2; got++) {
    mtx_lock(&m);
    while (count == 0) cnd_wait(&nonempty, &m);
    sum += queue[--count];
    mtx_unlock(&m);
  }
  return sum;
}

int main(void) {
  thrd_t p1, p2, c;
  int sum = 0;
  thrd_create(&c, consumer, NULL);
  thrd_create(&p1, producer, (void *)1L);
  thrd_create(&p2, producer, (void *)2L);
  thrd_join(p1, NULL);
  thrd_join(p2, NULL);
  thrd_join(c, &sum);
  printf("%d %d\n", sum, atomic_load(&pushed));
  return sum == 3 ? 0 : 1;
}

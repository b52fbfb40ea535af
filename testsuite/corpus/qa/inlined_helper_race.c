// robust: yes
// race: yes
// reason: both workers add to the plain total through a static inline helper with no synchronisation: a data race (ThreadSanitizer reports it with the helper's caller in the stack); no atomics, nothing to be non-robust
// Statistics kept through small inline helpers (inlined at -O1): the race is in the helper, reached from each worker.
#include <pthread.h>
#include <stdio.h>

struct stats {
  long total;
  long calls;
};
static struct stats st;

static inline void stats_add(struct stats *s, long v) {
  s->total += v;
}

static inline void record(long v) {
  stats_add(&st, v);
}

static void *worker(void *arg) {
  long v = (long)arg;
  record(v);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, worker, (void *)1);
  pthread_create(&b, NULL, worker, (void *)2);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%ld\n", st.total);
  return 0;
}

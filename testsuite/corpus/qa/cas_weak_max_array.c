// robust: no
// race: no
// reason: per-bucket maxima in an array of structs with an _Atomic long member, updated by atomic_compare_exchange_weak loops (relaxed load, release CAS retried while the value is smaller). Not robust: a thread whose relaxed first read of one bucket reads another thread's release CAS may then read a later bucket's max stale (MP through relaxed reads: the other thread's CAS on the stale bucket is po-before its release CAS on the bucket this thread read); the stale value only decides whether to try the CAS (it is smaller than the real one), but it feeds the loop's condition, so it is not a CAS-only retry. Main reads after join
// Concurrent max over an array of structs with atomic members, CAS-weak retry loops, four threads.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define BUCKETS 4
struct bucket {
  char label[8];
  _Atomic long max;
  atomic_uint updates;
};

static struct bucket buckets[BUCKETS];

static void update_max(struct bucket *b, long v) {
  long cur = atomic_load_explicit(&b->max, memory_order_relaxed); // pyrsan: violation
  while (cur < v && !atomic_compare_exchange_weak_explicit(&b->max, &cur, v, memory_order_release, memory_order_relaxed)) { // pyrsan: violation, pyrsan: stale
  }
  atomic_fetch_add_explicit(&b->updates, 1, memory_order_relaxed);
}

static void *worker(void *arg) {
  long id = (long)arg;
  for (long i = 0; i < 6; i++) update_max(&buckets[(id + i) % BUCKETS], id * 10 + i);
  return NULL;
}

int main(void) {
  pthread_t th[4];
  for (long i = 0; i < 4; i++) pthread_create(&th[i], NULL, worker, (void *)i);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < BUCKETS; i++) printf("%ld/%u ", atomic_load(&buckets[i].max), atomic_load(&buckets[i].updates));
  printf("\n");
  return 0;
}

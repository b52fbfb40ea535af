// robust: yes
// race: no
// reason: reader-writer spinlock on one word (bit 0: writer, readers counted in steps of 2): every acquisition is a CAS loop (acquire), every release an RMW (release); all synchronisation is through RMWs on one location, which read the latest value, so no access can read a stale value that flows on; a failed CAS only retries
// Reader-writer spinlock built from compare_exchange loops, two readers and one writer on a plain pair.
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#define WRITER 1u
static atomic_uint word;
static int a, b; /* invariant under the lock: a == b */
static int bad;

static void read_lock(void) {
  unsigned old = atomic_load_explicit(&word, memory_order_relaxed);
  for (;;) {
    if (old & WRITER) {
      sched_yield();
      old = atomic_load_explicit(&word, memory_order_relaxed);
      continue;
    }
    if (atomic_compare_exchange_weak_explicit(&word, &old, old + 2, memory_order_acquire, memory_order_relaxed))
      return;
  }
}
static void read_unlock(void) { atomic_fetch_sub_explicit(&word, 2, memory_order_release); }
static void write_lock(void) {
  unsigned expected = 0;
  while (!atomic_compare_exchange_weak_explicit(&word, &expected, WRITER, memory_order_acquire,
                                                memory_order_relaxed))
    expected = 0;
}
static void write_unlock(void) { atomic_fetch_and_explicit(&word, ~WRITER, memory_order_release); }

static void *reader(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    read_lock();
    if (a != b) bad = 1;
    read_unlock();
  }
  return NULL;
}
static void *writer(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    write_lock();
    a++;
    b++;
    write_unlock();
  }
  return NULL;
}

int main(void) {
  pthread_t t[3];
  pthread_create(&t[0], NULL, reader, NULL);
  pthread_create(&t[1], NULL, reader, NULL);
  pthread_create(&t[2], NULL, writer, NULL);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  printf("%d %d %d\n", a, b, bad);
  return bad;
}

/* Small concurrent programs for the controlled scheduler (testsuite/sched_runtime), one per
 * scenario, selected by argv[1]; exit status 0 when the program's own result is right. Built
 * once with `pyrsan build` (and once more with PYRSAN_NO_SPIN_LOOPS=1 for the plain loops). */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>

#include "pyrsan.h"

/* ---- mutex: two workers increment a counter under a lock ---- */
static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int counter;

static void *counter_worker(void *arg) {
  (void)arg;
  for (int i = 0; i < 3; i++) {
    pthread_mutex_lock(&counter_lock);
    int v = atomic_load_explicit(&counter, memory_order_relaxed);
    atomic_store_explicit(&counter, v + 1, memory_order_relaxed);
    pthread_mutex_unlock(&counter_lock);
  }
  return NULL;
}

static int mutex_counter(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, counter_worker, NULL);
  pthread_create(&b, NULL, counter_worker, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return atomic_load_explicit(&counter, memory_order_relaxed) == 6 ? 0 : 1;
}

/* ---- condition variables: a one-slot queue, producer and consumer ---- */
#define ITEMS 4
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER, not_full = PTHREAD_COND_INITIALIZER;
static atomic_int full, slot, sum;

static void *producer(void *arg) {
  (void)arg;
  for (int i = 1; i <= ITEMS; i++) {
    pthread_mutex_lock(&queue_lock);
    while (atomic_load_explicit(&full, memory_order_relaxed)) pthread_cond_wait(&not_full, &queue_lock);
    atomic_store_explicit(&slot, i, memory_order_relaxed);
    atomic_store_explicit(&full, 1, memory_order_relaxed);
    pthread_cond_signal(&not_empty);
    pthread_mutex_unlock(&queue_lock);
  }
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  for (int i = 1; i <= ITEMS; i++) {
    pthread_mutex_lock(&queue_lock);
    while (!atomic_load_explicit(&full, memory_order_relaxed)) pthread_cond_wait(&not_empty, &queue_lock);
    atomic_fetch_add_explicit(&sum, atomic_load_explicit(&slot, memory_order_relaxed), memory_order_relaxed);
    atomic_store_explicit(&full, 0, memory_order_relaxed);
    pthread_cond_broadcast(&not_full);
    pthread_mutex_unlock(&queue_lock);
  }
  return NULL;
}

static int cond_queue(void) {
  pthread_t p, c;
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&p, NULL, producer, NULL);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  return atomic_load_explicit(&sum, memory_order_relaxed) == ITEMS * (ITEMS + 1) / 2 ? 0 : 1;
}

/* ---- barrier phases, a semaphore hand-off, a once initialisation, an rwlock ---- */
#define NB 3
static pthread_barrier_t barrier;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t sem;
static atomic_int phase1, inits, serials, tokens, table;

static void init_once(void) { atomic_fetch_add_explicit(&inits, 1, memory_order_relaxed); }

static void *phase_worker(void *arg) {
  (void)arg;
  pthread_once(&once, init_once);
  pthread_rwlock_wrlock(&rw);
  atomic_fetch_add_explicit(&table, 1, memory_order_relaxed);
  pthread_rwlock_unlock(&rw);
  atomic_fetch_add_explicit(&phase1, 1, memory_order_relaxed);
  if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
    atomic_fetch_add_explicit(&serials, 1, memory_order_relaxed);
  if (atomic_load_explicit(&phase1, memory_order_relaxed) != NB) return (void *)1;
  pthread_rwlock_rdlock(&rw);
  int seen = atomic_load_explicit(&table, memory_order_relaxed);
  pthread_rwlock_unlock(&rw);
  if (seen != NB) return (void *)1;
  sem_post(&sem);
  if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
    atomic_fetch_add_explicit(&serials, 1, memory_order_relaxed);
  return NULL;
}

static int barrier_phases(void) {
  pthread_t t[NB];
  pthread_barrier_init(&barrier, NULL, NB);
  sem_init(&sem, 0, 0);
  for (int i = 0; i < NB; i++) pthread_create(&t[i], NULL, phase_worker, NULL);
  for (int i = 0; i < NB; i++) {
    sem_wait(&sem);
    atomic_fetch_add_explicit(&tokens, 1, memory_order_relaxed);
  }
  int bad = 0;
  for (int i = 0; i < NB; i++) {
    void *r;
    pthread_join(t[i], &r);
    bad |= r != NULL;
  }
  return (!bad && atomic_load_explicit(&inits, memory_order_relaxed) == 1 &&
          atomic_load_explicit(&serials, memory_order_relaxed) == 2 &&
          atomic_load_explicit(&tokens, memory_order_relaxed) == NB)
             ? 0
             : 1;
}

/* ---- C11 threads: thrd, mtx (recursive), cnd ---- */
static mtx_t c11_lock;
static cnd_t c11_cond;
static atomic_int c11_ready, c11_count;

static int c11_worker(void *arg) {
  (void)arg;
  mtx_lock(&c11_lock);
  while (!atomic_load_explicit(&c11_ready, memory_order_relaxed)) cnd_wait(&c11_cond, &c11_lock);
  mtx_lock(&c11_lock); /* recursive */
  atomic_fetch_add_explicit(&c11_count, 1, memory_order_relaxed);
  mtx_unlock(&c11_lock);
  mtx_unlock(&c11_lock);
  return 5;
}

static int c11_threads(void) {
  thrd_t a, b;
  mtx_init(&c11_lock, mtx_recursive);
  cnd_init(&c11_cond);
  thrd_create(&a, c11_worker, NULL);
  thrd_create(&b, c11_worker, NULL);
  mtx_lock(&c11_lock);
  atomic_store_explicit(&c11_ready, 1, memory_order_relaxed);
  cnd_broadcast(&c11_cond);
  mtx_unlock(&c11_lock);
  int ra = 0, rb = 0;
  thrd_join(a, &ra);
  thrd_join(b, &rb);
  return (ra == 5 && rb == 5 && atomic_load_explicit(&c11_count, memory_order_relaxed) == 2) ? 0 : 1;
}

/* ---- trylock, timed lock and timed wait that time out, spin lock ---- */
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER, unused = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static pthread_spinlock_t spin;
static atomic_int in_spin;

static void *timeout_worker(void *arg) {
  (void)arg;
  int r = 0;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += 3600; /* never by the clock: only the scheduler can time it out */
  if (pthread_mutex_trylock(&held) != EBUSY) r |= 1;
  if (pthread_mutex_timedlock(&held, &ts) != ETIMEDOUT) r |= 2;
  pthread_spin_lock(&spin);
  atomic_fetch_add_explicit(&in_spin, 1, memory_order_relaxed);
  pthread_spin_unlock(&spin);
  return (void *)(long)r;
}

static int timeouts(void) {
  pthread_t w;
  pthread_spin_init(&spin, 0);
  pthread_mutex_lock(&held);
  pthread_create(&w, NULL, timeout_worker, NULL);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += 3600;
  pthread_mutex_lock(&unused);
  int waited = pthread_cond_timedwait(&never, &unused, &ts); /* times out once the worker waits */
  pthread_mutex_unlock(&unused);
  void *r;
  pthread_join(w, &r);
  pthread_mutex_unlock(&held);
  pthread_spin_lock(&spin);
  atomic_fetch_add_explicit(&in_spin, 1, memory_order_relaxed);
  pthread_spin_unlock(&spin);
  return (r == NULL && waited == ETIMEDOUT && atomic_load_explicit(&in_spin, memory_order_relaxed) == 2) ? 0
                                                                                                         : 1;
}

/* ---- spin loops: a flag hand-off and a test-and-set lock ---- */
static atomic_int flag, data, tas, total;

static void *spin_waiter(void *arg) {
  (void)arg;
  while (atomic_load_explicit(&flag, memory_order_acquire) != 1) { /* a recognised spin loop */
  }
  int v = atomic_load_explicit(&data, memory_order_relaxed);
  while (atomic_exchange_explicit(&tas, 1, memory_order_acquire)) {
  }
  atomic_fetch_add_explicit(&total, v, memory_order_relaxed);
  atomic_store_explicit(&tas, 0, memory_order_release);
  return NULL;
}

static int spin_flag(void) {
  pthread_t w;
  pthread_create(&w, NULL, spin_waiter, NULL);
  while (atomic_exchange_explicit(&tas, 1, memory_order_acquire)) {
  }
  atomic_store_explicit(&data, 42, memory_order_relaxed);
  atomic_store_explicit(&flag, 1, memory_order_release);
  atomic_fetch_add_explicit(&total, 1, memory_order_relaxed);
  atomic_store_explicit(&tas, 0, memory_order_release);
  pthread_join(w, NULL);
  return atomic_load_explicit(&total, memory_order_relaxed) == 43 ? 0 : 1;
}

/* ---- pyrsan_wait hand-off ---- */
static atomic_int go, done, payload;

static void *wait_worker(void *arg) {
  (void)arg;
  pyrsan_wait(&go, 1);
  atomic_store_explicit(&payload, 7, memory_order_relaxed);
  atomic_store_explicit(&done, 1, memory_order_release);
  return NULL;
}

static int wait_handoff(void) {
  pthread_t w;
  pthread_create(&w, NULL, wait_worker, NULL);
  atomic_store(&go, 1);
  pyrsan_wait_explicit(&done, 1, memory_order_acquire);
  int v = atomic_load_explicit(&payload, memory_order_relaxed);
  pthread_join(w, NULL);
  return v == 7 ? 0 : 1;
}

/* ---- three threads contend for a BCAS lock and a test-and-set lock: waiters that fail on
 * a held lock must let its holder run, not wake each other ---- */
static atomic_int bcas_word, tas_word, in_cs;

static void *contender(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    pyrsan_bcas_explicit(&bcas_word, 0, 1, memory_order_acquire);
    atomic_fetch_add_explicit(&in_cs, 1, memory_order_relaxed);
    atomic_store_explicit(&bcas_word, 0, memory_order_release);
    while (atomic_exchange_explicit(&tas_word, 1, memory_order_acquire)) {
    }
    atomic_fetch_add_explicit(&in_cs, 1, memory_order_relaxed);
    atomic_store_explicit(&tas_word, 0, memory_order_release);
  }
  return NULL;
}

static int contended_locks(void) {
  pthread_t t[3];
  for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, contender, NULL);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  return atomic_load_explicit(&in_cs, memory_order_relaxed) == 12 ? 0 : 1;
}

/* ---- deadlocks ---- */
static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;
static atomic_int abba_x;

static void *ab(void *arg) {
  (void)arg;
  pthread_mutex_lock(&lock_a);
  atomic_fetch_add_explicit(&abba_x, 1, memory_order_relaxed);
  pthread_mutex_lock(&lock_b);
  pthread_mutex_unlock(&lock_b);
  pthread_mutex_unlock(&lock_a);
  return NULL;
}

static void *ba(void *arg) {
  (void)arg;
  pthread_mutex_lock(&lock_b);
  atomic_fetch_add_explicit(&abba_x, 1, memory_order_relaxed);
  pthread_mutex_lock(&lock_a);
  pthread_mutex_unlock(&lock_a);
  pthread_mutex_unlock(&lock_b);
  return NULL;
}

static int deadlock_abba(void) {
  pthread_t p, q;
  pthread_create(&p, NULL, ab, NULL);
  pthread_create(&q, NULL, ba, NULL);
  pthread_join(p, NULL);
  pthread_join(q, NULL);
  return atomic_load_explicit(&abba_x, memory_order_relaxed) == 2 ? 0 : 1;
}

static pthread_mutex_t dj_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dj_cond = PTHREAD_COND_INITIALIZER;
static atomic_int dj_ready;

static void *dj_worker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&dj_lock);
  while (!atomic_load_explicit(&dj_ready, memory_order_relaxed)) pthread_cond_wait(&dj_cond, &dj_lock);
  pthread_mutex_unlock(&dj_lock);
  return NULL;
}

/* every schedule deadlocks: main joins a thread that waits for a signal nobody sends */
static int deadlock_join(void) {
  pthread_t w;
  pthread_create(&w, NULL, dj_worker, NULL);
  pthread_join(w, NULL);
  return 0;
}

/* ---- a robustness violation: store buffering with release/acquire ---- */
static atomic_int sb_x, sb_y;
static int sb_r1;

static void *sb_t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&sb_x, 1, memory_order_release);
  sb_r1 = atomic_load_explicit(&sb_y, memory_order_acquire);
  return NULL;
}

static int store_buffering(void) {
  pthread_t t;
  pthread_create(&t, NULL, sb_t1, NULL);
  atomic_store_explicit(&sb_y, 1, memory_order_release);
  int r2 = atomic_load_explicit(&sb_x, memory_order_acquire);
  pthread_join(t, NULL);
  return r2 + sb_r1 >= 0 ? 0 : 1;
}

/* ---- main leaves with pthread_exit; the worker finishes the process ---- */
static atomic_int left;

static void *survivor(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&left, memory_order_acquire)) {
  }
  printf("survivor done\n");
  return NULL;
}

static int main_exit(void) {
  pthread_t t;
  pthread_create(&t, NULL, survivor, NULL);
  atomic_store_explicit(&left, 1, memory_order_release);
  pthread_exit(NULL);
}

/* ---- a normal mutex locked again by its owner: the owner waits for itself ---- */
static pthread_mutex_t relocked = PTHREAD_MUTEX_INITIALIZER;

static int relock(void) {
  pthread_mutex_lock(&relocked);
  pthread_mutex_lock(&relocked);
  return 0;
}

/* ---- a thread created by a constructor, before main (only when SCENARIO_BEFORE_MAIN is
 * set, so that the other scenarios keep their threads) ---- */
static pthread_t early;
static atomic_int early_value;

static void *early_worker(void *arg) {
  (void)arg;
  atomic_store_explicit(&early_value, 5, memory_order_release);
  return NULL;
}

__attribute__((constructor)) static void start_early(void) {
  if (getenv("SCENARIO_BEFORE_MAIN")) pthread_create(&early, NULL, early_worker, NULL);
}

static int before_main(void) {
  pthread_join(early, NULL);
  return atomic_load_explicit(&early_value, memory_order_acquire) == 5 ? 0 : 1;
}

/* ---- polling loops that write every iteration (no spin to the wait rules) ---- */
/* external: the optimiser may not drop a global no one reads, nor fold one no one sets */
atomic_int poll_mark, poll_done, poll_never;

/* The owner's "take() on an empty deque" shape: it stores a mark and restores it before it
 * reads the flag, so each iteration has a write of its own. */
static int poll_until(atomic_int *flag) {
  while (!atomic_load_explicit(flag, memory_order_acquire)) {
    atomic_store_explicit(&poll_mark, 1, memory_order_relaxed);
    atomic_store_explicit(&poll_mark, 0, memory_order_relaxed);
  }
  return 0;
}

static void *poll_setter(void *arg) {
  (void)arg;
  atomic_store_explicit(&poll_done, 1, memory_order_release);
  return NULL;
}

static int writing_poll(void) {
  pthread_t w;
  pthread_create(&w, NULL, poll_setter, NULL);
  poll_until(&poll_done);
  pthread_join(w, NULL);
  return 0;
}

static void *never_poller(void *arg) {
  (void)arg;
  poll_until(&poll_never);
  return NULL;
}

/* a real livelock: two threads poll for a flag nobody sets */
static int writing_livelock(void) {
  pthread_t w;
  pthread_create(&w, NULL, never_poller, NULL);
  poll_until(&poll_never);
  pthread_join(w, NULL);
  return 0;
}

static const struct {
  const char *name;
  int (*run)(void);
} scenarios[] = {
    {"mutex_counter", mutex_counter},
    {"cond_queue", cond_queue},
    {"barrier_phases", barrier_phases},
    {"c11_threads", c11_threads},
    {"timeouts", timeouts},
    {"spin_flag", spin_flag},
    {"wait_handoff", wait_handoff},
    {"deadlock_abba", deadlock_abba},
    {"deadlock_join", deadlock_join},
    {"store_buffering", store_buffering},
    {"main_exit", main_exit},
    {"relock", relock},
    {"contended_locks", contended_locks},
    {"before_main", before_main},
    {"writing_poll", writing_poll},
    {"writing_livelock", writing_livelock},
};

int main(int argc, char **argv) {
  for (size_t i = 0; argc > 1 && i < sizeof scenarios / sizeof scenarios[0]; i++)
    if (!strcmp(argv[1], scenarios[i].name)) return scenarios[i].run();
  fprintf(stderr, "usage: scenarios NAME\n");
  return 2;
}

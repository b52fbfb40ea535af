// robust: yes
// race: no
// reason: C11 <threads.h>: detached threads (thrd_detach) each keep a per-thread tss_t value whose destructor, run at thread exit, adds the thread's count to an atomic total with release and counts down an atomic latch with release; main waits for the latch to reach zero with acquire, then reads the plain per-thread slots each thread wrote before exit; mtx_t-protected shared list appends are ordered by the mutex
// C11 threads: thrd_detach, tss_create with a destructor, mtx_t, and a latch read by main.
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <threads.h>

#define N 4
static tss_t key;
static mtx_t lock;
static atomic_int latch = N;
static atomic_long total;
static int slot[N];
static int order[N], order_len;

static void destroy(void *p) {
  int *count = p;
  atomic_fetch_add_explicit(&total, *count, memory_order_relaxed);
  free(count);
  atomic_fetch_sub_explicit(&latch, 1, memory_order_release);
}

static int run(void *arg) {
  int id = (int)(long)arg;
  int *count = malloc(sizeof *count);
  *count = id + 1;
  tss_set(key, count);
  slot[id] = id * 10;
  mtx_lock(&lock);
  order[order_len++] = id;
  mtx_unlock(&lock);
  return 0;
}

int main(void) {
  tss_create(&key, destroy);
  mtx_init(&lock, mtx_plain);
  for (long i = 0; i < N; i++) {
    thrd_t t;
    thrd_create(&t, run, (void *)i);
    thrd_detach(t);
  }
  while (atomic_load_explicit(&latch, memory_order_acquire) != 0) {
    thrd_yield();
  }
  int sum = 0;
  for (int i = 0; i < N; i++) sum += slot[i];
  printf("%d %ld %d\n", sum, atomic_load(&total), order_len);
  return 0;
}

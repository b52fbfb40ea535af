// robust: yes
// race: no
// reason: Chase-Lev with Le et al.'s orders: take() separates its store of bottom from its read of top by an SC fence, steal() its read of top from its read of bottom by an SC fence, and both claim the last item with a seq_cst CAS on top; push publishes the item with a release fence before the relaxed bottom store that steal's acquire read takes; with one owner (push 2, take 2) and one thief no SC-inconsistent graph exists (exploration complete: 17 classes)
// Chase-Lev deque (fixed array of 4): the owner pushes 2 and takes, one thief steals; each item is taken once.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define SIZE 4
static atomic_long top, bottom;
static atomic_int items[SIZE];
static int taken[3];

static void push(int v) {
  long b = atomic_load_explicit(&bottom, memory_order_relaxed);
  atomic_store_explicit(&items[b % SIZE], v, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&bottom, b + 1, memory_order_relaxed);
}

static int take(void) {
  long b = atomic_load_explicit(&bottom, memory_order_relaxed) - 1;
  atomic_store_explicit(&bottom, b, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  long t = atomic_load_explicit(&top, memory_order_relaxed);
  int x = 0;
  if (t <= b) {
    x = atomic_load_explicit(&items[b % SIZE], memory_order_relaxed);
    if (t == b) {
      if (!atomic_compare_exchange_strong_explicit(&top, &t, t + 1, memory_order_seq_cst, memory_order_relaxed))
        x = 0;
      atomic_store_explicit(&bottom, b + 1, memory_order_relaxed);
    }
  } else {
    atomic_store_explicit(&bottom, b + 1, memory_order_relaxed);
  }
  return x;
}

static int steal(void) {
  long t = atomic_load_explicit(&top, memory_order_acquire);
  atomic_thread_fence(memory_order_seq_cst);
  long b = atomic_load_explicit(&bottom, memory_order_acquire);
  if (t < b) {
    int x = atomic_load_explicit(&items[t % SIZE], memory_order_relaxed);
    if (!atomic_compare_exchange_strong_explicit(&top, &t, t + 1, memory_order_seq_cst, memory_order_relaxed))
      return 0;
    return x;
  }
  return 0;
}

static void *owner(void *arg) {
  (void)arg;
  push(1);
  push(2);
  taken[0] = take();
  taken[1] = take();
  return NULL;
}
static void *thief(void *arg) {
  (void)arg;
  taken[2] = steal();
  return NULL;
}

int main(void) {
  pthread_t o, t;
  pthread_create(&o, NULL, owner, NULL);
  pthread_create(&t, NULL, thief, NULL);
  pthread_join(o, NULL);
  pthread_join(t, NULL);
  printf("%d %d %d\n", taken[0], taken[1], taken[2]);
  return 0;
}

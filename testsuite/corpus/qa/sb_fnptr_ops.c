// robust: no
// race: no
// reason: SB through a table of function pointers: each thread calls ops->store then ops->load, which are relaxed store/load helpers; nothing orders a thread's store before its load for the other thread, so both may read 0; the reported access and the stale write are the helpers' lines
// SB whose atomic accesses are made through function pointers chosen at run time.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

struct atomic_ops {
  void (*store)(atomic_int *, int);
  int (*load)(atomic_int *);
};

static void store_rlx(atomic_int *p, int v) { atomic_store_explicit(p, v, memory_order_relaxed); } // pyrsan: stale
static int load_rlx(atomic_int *p) { return atomic_load_explicit(p, memory_order_relaxed); } // pyrsan: violation
static void store_sc(atomic_int *p, int v) { atomic_store(p, v); }
static int load_sc(atomic_int *p) { return atomic_load(p); }

static const struct atomic_ops relaxed_ops = {store_rlx, load_rlx};
static const struct atomic_ops sc_ops = {store_sc, load_sc};
static const struct atomic_ops *volatile ops = &sc_ops;
static atomic_int x, y;
static int r[2];

static void *t0(void *arg) {
  (void)arg;
  const struct atomic_ops *o = ops;
  o->store(&x, 1);
  r[0] = o->load(&y);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  const struct atomic_ops *o = ops;
  o->store(&y, 1);
  r[1] = o->load(&x);
  return NULL;
}

int main(int argc, char **argv) {
  (void)argv;
  if (argc < 2) ops = &relaxed_ops;
  pthread_t a, b;
  pthread_create(&a, NULL, t0, NULL);
  pthread_create(&b, NULL, t1, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%d %d\n", r[0], r[1]);
  return 0;
}

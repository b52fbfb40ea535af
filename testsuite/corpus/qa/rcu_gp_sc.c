// robust: yes
// race: no
// reason: every atomic access is seq_cst (fenced: an SC fence on each side), so no pair of them can be reordered and every execution is SC; the algorithm is correct under SC: a reader announces the grace-period counter it saw before it loads the pointer, so the writer, after publishing the new config and bumping the counter, waits for every reader that announced the old counter, and the reader's seq_cst store of 0 (a release) orders its reads of the old config before the writer's poisoning
// Userspace-RCU-like grace periods: readers announce the period, the writer swaps the config, bumps the period and waits for old readers before reusing the old config.
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdio.h>

#define READERS 2
struct config {
  int a, b;
};
static struct config cfgs[2] = {{1, -1}, {0, 0}};
static _Atomic(struct config *) current = &cfgs[0];
static atomic_ulong gp_ctr = 1;
static atomic_ulong reader_gp[READERS];
static int torn;

static void *reader(void *arg) {
  long id = (long)arg;
  for (int i = 0; i < 2; i++) {
    atomic_store(&reader_gp[id], atomic_load(&gp_ctr)); /* rcu_read_lock */
    struct config *c = atomic_load(&current);
    if (c->a + c->b != 0) torn = 1;
    atomic_store(&reader_gp[id], 0); /* rcu_read_unlock */
  }
  return NULL;
}

static void synchronize_rcu(void) {
  unsigned long next = atomic_fetch_add(&gp_ctr, 1) + 1;
  for (int r = 0; r < READERS; r++) {
    for (;;) {
      unsigned long g = atomic_load(&reader_gp[r]);
      if (g == 0 || g == next) break;
      sched_yield();
    }
  }
}

static void *writer(void *arg) {
  (void)arg;
  cfgs[1].a = 2;
  cfgs[1].b = -2;
  struct config *old = atomic_exchange(&current, &cfgs[1]);
  synchronize_rcu();
  old->a = 99; /* no reader holds it any more */
  old->b = 0;
  return NULL;
}

int main(void) {
  pthread_t r[READERS], w;
  for (long i = 0; i < READERS; i++) pthread_create(&r[i], NULL, reader, (void *)i);
  pthread_create(&w, NULL, writer, NULL);
  for (int i = 0; i < READERS; i++) pthread_join(r[i], NULL);
  pthread_join(w, NULL);
  printf("torn=%d\n", torn);
  return 0;
}

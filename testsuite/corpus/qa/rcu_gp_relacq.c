// robust: no
// race: no
// reason: the RCU of rcu_gp_sc.c with release stores and acquire loads: the reader's announcement (release store to reader_gp) then its acquire load of current, against the writer's exchange of current then its acquire load of reader_gp, is store buffering: both loads may read stale values (the reader the old config, the writer a 0 announcement), which SC forbids; the writer may then poison a config the reader still reads, but no SC interleaving does that, so no race is reported (race detection runs on SC schedules)
// Userspace-RCU-like grace periods with release/acquire only (the missing store-load fence of RCU).
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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
    unsigned long g = atomic_load_explicit(&gp_ctr, memory_order_acquire); // pyrsan: violation
    atomic_store_explicit(&reader_gp[id], g, memory_order_release); // pyrsan: violation, pyrsan: stale
    struct config *c = atomic_load_explicit(&current, memory_order_acquire); // pyrsan: violation
    if (c->a + c->b != 0) torn = 1;
    atomic_store_explicit(&reader_gp[id], 0, memory_order_release); // pyrsan: violation, pyrsan: stale
  }
  return NULL;
}

static void synchronize_rcu(void) {
  unsigned long next = atomic_fetch_add_explicit(&gp_ctr, 1, memory_order_acq_rel) + 1; // pyrsan: violation, pyrsan: stale
  for (int r = 0; r < READERS; r++) {
    for (;;) {
      unsigned long g = atomic_load_explicit(&reader_gp[r], memory_order_acquire); // pyrsan: violation
      if (g == 0 || g == next) break;
      sched_yield();
    }
  }
}

static void *writer(void *arg) {
  (void)arg;
  cfgs[1].a = 2;
  cfgs[1].b = -2;
  struct config *old = atomic_exchange_explicit(&current, &cfgs[1], memory_order_acq_rel); // pyrsan: violation, pyrsan: stale
  synchronize_rcu();
  old->a = 99;
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

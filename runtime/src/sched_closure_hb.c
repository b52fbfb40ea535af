/* Blocked iterations under the F-order closure (docs/design/exploration.md §11). §9's condition
 * (i) on a failed iteration, Wsc(x) ⊑ Tsc(t) before each of its loads, depends on the order of
 * the SC fences, which the closure varies within a coarse class. This file tracks a sufficient
 * condition that holds in every interleaving of the class: the write the load reads is known to
 * the thread through the coarse order before the load, along edges each of which carries Tsc on
 * the hb_SC side of the engine (rsan_engine.h):
 *
 * - program order (Tsc only grows);
 * - a load of x after the write it reads (rf: Tsc ⊔= Wsc(x), which that write set to its
 *   thread's Tsc, and only a write of x changes it);
 * - a store of x after the previous write of x and the reads of x since (mo, fr: Tsc ⊔= Msc(x),
 *   which holds the previous write's Tsc and every such read's).
 *
 * Each thread has a vector of positions (its chosen steps, and the other threads' steps it knows
 * through those edges); each address its last write's vector and the join of the reads since.
 * An RMW or a CAS (which may fail: then it wrote nothing) joins only the write it reads and
 * leaves the address's last write unknown; any other step that may write an address (a lock, a
 * sync primitive) makes it unknown too; SC fences, spawns and joins add no edge. Each of these
 * can only make the condition fail where it holds, never hold where it fails. The edges are
 * pairs of dependent steps of the explorer's coarse relation, ordered alike in every
 * interleaving of a coarse class, so the condition is a function of the class (Claim 1).
 * Taken only under sched=dfs with blocked iterations (sched_await < 0) and the closure on
 * (sched_closure != 0); everything here runs under rsan_sched.lock. */
#include <string.h>

#include "rsan_engine.h"
#include "rsan_sched_closure_hb.h"

#define HB_THREADS 16  /* threads whose positions are tracked (tids below); others: unknown */
#define HB_SLOTS 4096  /* addresses; a power of two */
#define HB_PROBES 64

typedef struct vc {
  uint32_t v[HB_THREADS];
} vc;

enum { REC_FREE = 0, REC_READ, REC_WRITTEN, REC_UNKNOWN };

/* One address's record, its fields together: a run (a fork of the fork server, whose every page
 * it writes is a fault) writes one record per address it touches, not six arrays' pages. */
typedef struct hb_rec {
  uintptr_t addr;
  uint32_t pos;
  unsigned char state, writer;
  vc write, reads;
} hb_rec;

static vc thread_vc[HB_THREADS];
static hb_rec recs[HB_SLOTS];
static int hb_full; /* an address found no slot: from then on nothing is known */

static int active(void) {
  return rsan_sched_dfs() && rsan_sched_flag.sched_await < 0 && rsan_sched_flag.sched_closure != 0;
}

/* The first slot of an address: the addresses of one 256-byte block in consecutive slots from a
 * base that hashes the block (a program's variables lie close together: their records share
 * pages), the blocks spread over the table. */
static size_t first_slot(uintptr_t addr) {
  return (size_t)(((addr >> 8) * 0x9E3779B97F4A7C15ull) >> 52) + (size_t)((addr >> 2) & 63);
}

static int slot(uintptr_t addr, int insert) {
  size_t h = first_slot(addr);
  for (size_t i = 0; i < HB_PROBES; i++) {
    size_t k = (h + i) & (HB_SLOTS - 1);
    if (recs[k].addr == addr) return (int)k;
    if (!recs[k].addr) {
      if (!insert) return -1;
      recs[k].addr = addr;
      recs[k].state = REC_READ;
      return (int)k;
    }
  }
  hb_full = 1;
  return -1;
}

static void join(vc *a, const vc *b) {
  for (int i = 0; i < HB_THREADS; i++)
    if (b->v[i] > a->v[i]) a->v[i] = b->v[i];
}

static int plain_write(int kind) { return kind == RSAN_SK_STORE; }

void rsan_closure_hb_step(const sched_thread *c) {
  if (!active() || !c->addr || hb_full) {
    if (active() && c->tid >= 0 && c->tid < HB_THREADS) thread_vc[c->tid].v[c->tid]++;
    return;
  }
  const int writes = c->w && c->kind != RSAN_SK_SPAWN && c->kind != RSAN_SK_JOIN && c->kind != RSAN_SK_EXIT &&
                     c->kind != RSAN_SK_EXIT_PROCESS && c->kind != RSAN_SK_FENCE &&
                     c->kind != RSAN_SK_FENCE_SC && c->kind != RSAN_SK_AWAIT;
  const int reads = c->kind == RSAN_SK_LOAD || c->kind == RSAN_SK_RMW || plain_write(c->kind);
  if (c->tid < 0 || c->tid >= HB_THREADS) { /* untracked thread: what it writes is unknown */
    if (writes) {
      int k = slot(c->addr, 1);
      if (k >= 0) {
        recs[k].state = REC_UNKNOWN;
        memset(&recs[k].reads, 0, sizeof recs[k].reads);
      }
    }
    return;
  }
  vc *v = &thread_vc[c->tid];
  v->v[c->tid]++;
  if (!writes && !reads) return;
  int k = slot(c->addr, 1);
  if (k < 0) return;
  if (reads && recs[k].state == REC_WRITTEN) join(v, &recs[k].write); /* rf (mo for a store) */
  if (c->kind == RSAN_SK_LOAD) {
    join(&recs[k].reads, v);
  } else if (plain_write(c->kind) && c->w) {
    join(v, &recs[k].reads); /* fr */
    recs[k].write = *v;
    memset(&recs[k].reads, 0, sizeof recs[k].reads);
    recs[k].state = REC_WRITTEN;
    recs[k].writer = (unsigned char)c->tid;
    recs[k].pos = v->v[c->tid];
  } else if (writes) { /* an RMW, a CAS (it may have failed), a lock, a sync primitive */
    memset(&recs[k].reads, 0, sizeof recs[k].reads);
    recs[k].state = REC_UNKNOWN;
  }
}

int rsan_closure_hb_imports(const sched_thread *c) {
  if (hb_full || c->tid < 0 || c->tid >= HB_THREADS) return 1;
  int k = slot(c->addr, 0);
  if (k < 0 || recs[k].state == REC_READ) { /* no write under the scheduler: Wsc(x) must be ⊥ */
    rsan_loc *l = rsan_loc_lookup_i(c->addr);
    if (!l) return 0;
    rsan_clk empty;
    rsan_clk_init(&empty);
    int out = !rsan_clk_leq(rsan_loc_wsc(l), &empty);
    rsan_clk_release(&empty);
    rsan_loc_release(l);
    return out;
  }
  if (recs[k].state != REC_WRITTEN) return 1;
  int u = recs[k].writer;
  return u != c->tid && thread_vc[c->tid].v[u] < recs[k].pos;
}

/* pyrsan runtime: a location's facts, write history and record (location.c, facts.c,
 * history.c); part of rsan_internal.h, which includes it after the clocks and the race
 * detector's vector clocks it uses. Not to be included on its own. */
#ifndef RSAN_LOCATION_H
#define RSAN_LOCATION_H

/* ---- per-location facts (location.c) ----
 * The last RSAN_FACTS facts of a location in its lock order (timestamps non-decreasing), and
 * per slot the newest fact evicted from that window. The query of a clock at x scans the
 * window newest first and stops at the first fact the clock contains (it holds the max); if
 * none, the evicted facts give exact bounds: a slot whose newest evicted fact is contained
 * contributes exactly its timestamps, any other at most them (docs/design/clocks.md). */
#ifndef RSAN_FACTS
#define RSAN_FACTS 4 /* the window's initial size, inline in the location */
#endif
#ifndef RSAN_FACTS_MAX
#define RSAN_FACTS_MAX 128 /* it doubles, up to this, when queries need older facts */
#endif
/* A fact in the window: its timestamps by their low 16 bits. Exact: every write to x adds a
 * fact (rules.c: a write's stamp increment and its fact are one step), so a fact in the window
 * of at most RSAN_FACTS_MAX facts is less than 2^16 writes old, and the full value is the
 * newest timestamp of x with those low bits (rsan_fact_ts). 16 bytes: 4 to a cache line. */
typedef struct rsan_fact {
  uint64_t epoch;
  uint32_t slot;
  uint16_t ts16, tsU16;
} rsan_fact;
static inline uint64_t rsan_fact_ts(uint64_t stamp, uint16_t low) {
  return stamp - (uint16_t)((uint16_t)stamp - low);
}
/* a fact's slot and low timestamps in one 64-bit store (the fields' bytes, little-endian) */
static inline void rsan_fact_set_slot_ts(rsan_fact *f, uint32_t slot, uint64_t stamp, uint64_t stampU) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t w = (uint64_t)slot | (uint64_t)(uint16_t)stamp << 32 | (uint64_t)(uint16_t)stampU << 48;
  __builtin_memcpy(&f->slot, &w, sizeof w);
#else
  f->slot = slot;
  f->ts16 = (uint16_t)stamp;
  f->tsU16 = (uint16_t)stampU;
#endif
}
_Static_assert(__builtin_offsetof(rsan_fact, ts16) == 12 && __builtin_offsetof(rsan_fact, tsU16) == 14 &&
                   __builtin_offsetof(rsan_fact, slot) == 8 && sizeof(rsan_fact) == 16,
               "slot, ts16, tsU16: one 64-bit word after the epoch");
#define RSAN_EV_HIST 2  /* evicted facts remembered per slot */
#define RSAN_EV_SLOTS 4 /* slots remembered per location; beyond, only a bound */
#define RSAN_EV_MAX 256 /* ... except for hot locations (window at RSAN_FACTS_MAX): up to this */
/* One slot's evicted facts: one cache line, what an eviction writes (a 64-byte aligned
 * array, facts.c). Its state is in the epochs (docs/design/clocks.md §27): epochs start at 1
 * and a slot's facts leave the window in order with increasing epochs, so an entry is in use
 * iff h[0].epoch != 0 (the first eviction writes h[0]), its newest evicted fact is the h with
 * the larger epoch, and an eviction overwrites the other one (rsan_ev_next). The first evicted
 * fact's tsU, written once, is in a second array after the entries (rsan_evfirst). */
typedef struct __attribute__((aligned(64))) rsan_evicted {
  uint64_t first;    /* epoch of the first of them (the slot's first fact on x) */
  uint64_t first_ts; /* its timestamp */
  struct {
    uint64_t epoch, ts, tsU;
  } h[RSAN_EV_HIST]; /* its newest evicted facts (epoch 0: none) */
} rsan_evicted;
_Static_assert(RSAN_EV_HIST == 2 && sizeof(rsan_evicted) == 64, "an entry's order is its two epochs");
static inline int rsan_ev_used(const rsan_evicted *e) { return e->h[0].epoch != 0; }
static inline unsigned rsan_ev_newest(const rsan_evicted *e) { return e->h[1].epoch > e->h[0].epoch; }
/* the h the next eviction writes: the older one; h[1] while h[0] alone is used; h[0] first */
static inline unsigned rsan_ev_next(const rsan_evicted *e) { return e->h[0].epoch > e->h[1].epoch; }
typedef struct rsan_evfirst {
  uint64_t tsU; /* the slot's first evicted fact's U timestamp */
} rsan_evfirst;
/* The table's bound, after the rsan_evfirst array (facts.c): it lives with the table, not in
 * the location record, since most locations never evict a fact. */
typedef struct rsan_evbound {
  uint64_t dropts, droptsU; /* max timestamps of the evicted facts of slots ev dropped */
} rsan_evbound;
typedef struct rsan_evtail {
  rsan_evbound b;
  uint32_t evslot[RSAN_EV_SLOTS]; /* sparse table: slot + 1 of each used entry (0: free) */
} rsan_evtail;
#define RSAN_EV_SLOTS_LOG 2 /* log2 RSAN_EV_SLOTS: a sparse table's evlog (a direct one's is more) */
_Static_assert(RSAN_EV_SLOTS == 1 << RSAN_EV_SLOTS_LOG, "a sparse table has 1 << RSAN_EV_SLOTS_LOG entries");
_Static_assert(RSAN_EV_SLOTS * (sizeof(rsan_evicted) + sizeof(rsan_evfirst)) + sizeof(rsan_evtail) == 320,
               "a sparse table is 320 bytes: a size class of alloc.c (docs/design/clocks.md §27)");
_Static_assert(RSAN_EV_MAX <= 1 << 15 && (RSAN_EV_MAX & (RSAN_EV_MAX - 1)) == 0 && RSAN_EV_SLOTS < 8,
               "evlog: direct tables have 8 .. RSAN_EV_MAX entries, a power of 2");
/* The narrow sparse table (docs/design/clocks.md §31): the same RSAN_EV_SLOTS entries with
 * every epoch and timestamp in 32 bits, while x's stamps and every epoch stored fit and every
 * slot of an entry has its slot + 1 below UINT16_MAX (so the record's evslot names it: no
 * evslot in the tail). Before a value or a slot that does not fit is stored, the table is
 * widened (facts.c ev_widen: every value zero-extended, the same entries in the same places);
 * a table is never narrowed. 160 bytes (its tail only the rsan_evbound), alloc.c's class of
 * its own, against 320. Its evlog is RSAN_EV_NARROW, below RSAN_EV_SLOTS_LOG, so that
 * rsan_loc_evdirect needs no other test. */
typedef struct __attribute__((aligned(32))) rsan_evicted32 {
  uint32_t first, first_ts;
  struct {
    uint32_t epoch, ts, tsU;
  } h[RSAN_EV_HIST];
} rsan_evicted32;
#define RSAN_EV_NARROW 1 /* evlog of a narrow sparse table */
_Static_assert(sizeof(rsan_evicted32) == 32 &&
                   RSAN_EV_SLOTS * (sizeof(rsan_evicted32) + sizeof(uint32_t)) + sizeof(rsan_evbound) ==
                       160 &&
                   RSAN_EV_NARROW < RSAN_EV_SLOTS_LOG,
               "a narrow table is 160 bytes, 32-byte entries (alloc.c's 160-byte class is 32-byte aligned)");
/* whether an epoch and timestamps fit a narrow entry (or bounds of them: x's stamps) */
static inline int rsan_ev_fits32(uint64_t epoch, uint64_t ts, uint64_t tsU) {
  return !((epoch | ts | tsU) >> 32);
}
/* A clock's value at a location: exact when lo == hi (both sides). */
typedef struct rsan_q {
  uint64_t lo, loU, hi, hiU;
} rsan_q;

void *rsan_alloc_raw(size_t n);  /* not zeroed; aborts on failure */
void *rsan_alloc_line(size_t n); /* zeroed, 64-byte aligned (rsan_free releases it) */
/* a location's satellites come from alloc.c's size classes (rsan_slab_alloc): released only
 * by these, which know their sizes */
struct rsan_loc;
struct rsan_hist;
void rsan_loc_ev_free(struct rsan_loc *l);  /* facts.c: the evicted-fact table; ev, evlog := 0 */
void rsan_hist_free(struct rsan_loc *l);    /* history.c: the ring (before hist_next changes) */
struct rsan_hist *rsan_hist_alloc(uint32_t n); /* history.c: a zeroed ring of n entries */
void rsan_slab_print_census(void);
/* alloc.c: a zeroed history ring of n bytes (64 << k, k <= 2) from the buddy system, and its release */
void *rsan_ring_alloc(size_t n);
void rsan_ring_free(void *p, size_t n);             /* alloc.c: the size classes' bytes (verbosity >= 1) */

/* ---- per-location write history (for reports) ---- */
/* writes remembered per location: the exact window of the value checks (algorithm.md §4,
 * architecture.md "Value tracking"); older writes are assumed not to exist (a miss) */
#ifndef RSAN_HIST
#define RSAN_HIST 8
#endif
#define RSAN_HIST_STACK 4 /* call sites remembered per write */

/* What a write's entry names through its key (docs/design/clocks.md §28): the write's site,
 * its call stack (RSAN_HIST_STACK site ids, innermost first, 0 after the last frame, as
 * rsan_thread_stack fills a zeroed array) and its kind. Keys are interned in the key pool
 * (history.c), each distinct one kept once for the run under an index that never changes: a
 * program has as many as it has (site, call path, kind) triples that write. */
typedef struct rsan_hkey {
  uint64_t site;
  uint64_t stack[RSAN_HIST_STACK];
  uint64_t kind; /* rsan_hkey_kind: order, op, rmw_op, size */
} rsan_hkey;
static inline uint64_t rsan_hkey_kind(int order, int op, int rmw_op, int size) {
  return (uint64_t)(uint8_t)order | (uint64_t)(uint8_t)op << 8 | (uint64_t)(uint8_t)rmw_op << 16 |
         (uint64_t)(uint8_t)size << 24;
}
/* One entry per write, 32 bytes, two to a cache line (the ring is 64-byte aligned, history.c):
 * inline what the value checks read (stamps, value, whether an RMW) and the thread; the rest
 * by the key's index. Nothing is lost: rsan_hist_decode gives back every field a report reads
 * (rsan_write), as the write stored it. */
typedef struct rsan_hist {
  uint64_t ts;    /* stamp of the write (0: slot empty) */
  uint64_t tsU;   /* stampU after the write (== its own U stamp for a non-RMW write) */
  uint64_t value; /* as written (masked to its size; the fold of a wider one) */
  uint32_t key;   /* the key's index << 1 | rmw (1 for RMW / successful CAS) */
  int32_t tid;
} rsan_hist;
_Static_assert(sizeof(rsan_hist) == 32 && 64 % sizeof(rsan_hist) == 0, "two history entries to a cache line");
#define RSAN_HKEY_MAX (1u << 31) /* key indices: 31 bits */
static inline int rsan_hist_rmw(const rsan_hist *h) { return (int)(h->key & 1); }
/* A write as a report names it: an entry and its key, decoded (rsan_hist_decode) */
typedef struct rsan_write {
  uint64_t ts, tsU, site, value;
  uint64_t stack[RSAN_HIST_STACK];
  int32_t tid;
  uint8_t order; /* enum rsan_order as written by the program */
  uint8_t op;    /* enum rsan_opkind */
  uint8_t rmw_op; /* enum rsan_rmw_op when op is RSAN_OP_RMW */
  uint8_t rmw;
  uint8_t size;
} rsan_write;
/* history.c: the key pool: the index of k (put once, the same index ever after), k back */
uint32_t rsan_hist_key_put(const rsan_hkey *k);
void rsan_hist_key_get(uint32_t i, rsan_hkey *out);
uint64_t rsan_hist_key_bytes(void); /* the pool's bytes (census) */
void rsan_hist_decode(const rsan_hist *h, rsan_write *w); /* h not empty (ts != 0) */
/* A thread's cache of the keys its writes used last, direct-mapped by the site and the
 * innermost caller (rsan_engine.h rsan_hist_key_i): a write whose key is there pays no pool
 * lookup. */
#define RSAN_HKC 32 /* a power of 2 */
typedef struct rsan_hkc {
  rsan_hkey k;
  uint64_t idx; /* the key's index (a zeroed slot: a key of size 0, which no write has) */
} rsan_hkc;

/* ---- location state (location.c) ---- */
/* Cache lines in the order an access reads them (records are 64-byte aligned, location.c):
 * line 0 the lock, address, stamps and window state; line 1 the inline facts (or, once the
 * window grew, the pointer to it); line 2 Msc; line 3 the rest; lines 4 and 5 Wsc and W: 6
 * lines, 384 bytes (docs/design/clocks.md §15). An atomic access touches lines it can find
 * without following a pointer; what only some locations need (the evicted facts'
 * bookkeeping, a grown window) lives in their own allocations.
 * Size classes (docs/design/clocks.md §19): a record is made without its last lines while the
 * clocks they hold are ⊥ — RSAN_LOC_COLD (lines 0-3: W = Wsc = ⊥, a location never written)
 * and RSAN_LOC_NOW (lines 0-4: W = ⊥) — and is promoted, by a bigger record that takes its
 * place in the table (location.c rsan_loc_promote), before an operation would make one of them not ⊥.
 * A missing clock reads as ⊥ (rsan_loc_w, rsan_loc_wsc). */
#define RSAN_LOC_FULL 0 /* cls: every line (zeroed memory, F) */
#define RSAN_LOC_NOW 1  /* no W line: W = ⊥ */
#define RSAN_LOC_COLD 2 /* no W or Wsc line: W = Wsc = ⊥ */
#define RSAN_LOC_COMPACT 3 /* rsan_loc_compact: a layout of its own, never given to the rules */
#define RSAN_LOC_NCLS 4
/* rsan_loc.retired of a live compact record: no lookup takes it for a rsan_loc (the fast
 * path's test fails; rsan_loc_acquire_slow and rsan_loc_peek expand it first) */
#define RSAN_LOC_LIVE_COMPACT 2
typedef struct __attribute__((aligned(64))) rsan_loc {
  rsan_spin lock;
  uint8_t fcap;       /* window size: RSAN_FACTS (inline) .. RSAN_FACTS_MAX */
  uint8_t cls;        /* size class: RSAN_LOC_FULL, RSAN_LOC_NOW, RSAN_LOC_COLD (6 - cls lines) */
  uint8_t retired;    /* set under lock when removed from the table */
  uint8_t nocheck;    /* sync primitive address: checks off */
  uint8_t init_known; /* init_value holds the value of the timestamp-0 write */
  uint8_t msc_wsc;    /* Msc equals Wsc (after a write; Msc's own array is stale): rsan_loc_msc */
  uint8_t grow;       /* a query needed the evicted facts: double the window at the next fact */
  uint8_t evlog;      /* ev (when not NULL) has 1 << evlog entries; indexed by slot (a hot
                         location, facts.c) when evlog > RSAN_EV_SLOTS_LOG */
  uint32_t hist_next;
  uintptr_t addr;
  uint64_t stamp, stampU; /* algorithm.md §2 */
  uint64_t nfacts;        /* facts ever added; the window is [fold, nfacts), at most fcap */
  uint64_t fold;          /* facts evicted so far */
  rsan_hist *hist;        /* rsan_hist_len entries, allocated at the first write */
  union {
    rsan_fact facts_inline[RSAN_FACTS]; /* the window, by nfacts % fcap, while fcap == RSAN_FACTS */
    rsan_fact *facts_ext; /* the window once it grew (fcap > RSAN_FACTS): its line is free */
  };
  rsan_clk Msc; /* hb_SC side: Msc/MscU fused (algorithm.md §2) */
  uint64_t id;
  uint64_t msc_in;  /* while !msc_wsc, a clock version Msc is known to contain (0: ⊥); while
                       msc_wsc, Wsc's version is (rsan_sc_load_i) */
  rsan_evicted *ev; /* facts evicted from the window (NULL until one is), then rsan_evfirst
                       and rsan_evtail (facts.c) */
  rsan_vc S;        /* race detector: the sync clock S_x (algorithm.md §5) */
  /* sparse table: rsan_evtail.evslot as uint16_t, UINT16_MAX when it does not fit (then only
   * the tail names the slot): an eviction finds its slot's entry without reading the tail */
  union {
    uint16_t evslot[RSAN_EV_SLOTS];
    /* a direct table (which has no use for evslot; its window is at RSAN_FACTS_MAX): the slot
     * of the window's oldest fact when the last fact was added, a hint for the entry the
     * next fact writes (rsan_loc_prefetch_eviction); no value depends on it */
    uint32_t ev_hint;
  };
  union {
    uint64_t init_value;         /* memory's value when the location was first touched */
    struct rsan_loc *free_next;  /* a retired record, on its class's free list (location.c) */
  };
  struct rsan_loc *gnext; /* the table's chain of the granule (location.c) */
  rsan_clk Wsc;           /* hb_SC side: Wsc/WscU fused (not in a RSAN_LOC_COLD record) */
  rsan_clk W;             /* hb side: W and WU fused (algorithm.md §2), over facts (RSAN_LOC_FULL) */
} rsan_loc;
_Static_assert(sizeof(rsan_loc) == 384, "rsan_loc is 6 cache lines (docs/design/clocks.md §15)");
/* The compact record (docs/design/clocks.md §21): the state of a location that a COLD record
 * holds with every other field at its cleared value: never written, at most
 * RSAN_LOC_COMPACT_FACTS facts and none evicted, Msc ⊥, a snapshot with at most one difference
 * or an inline clock of at most 4 entries below 2^32, S_x ⊥, no evicted-fact table, checks on. Two lines. It is made only from such a
 * COLD record after a load that added a fact (location.c rsan_loc_compact), and expanded back
 * into a record of the class an operation needs before any operation (rsan_loc_promote): no
 * rule ever reads one. Line 0 has rsan_loc's lock, fcap, cls, retired and addr at their offsets
 * (what a reader looks at before it has checked a record under its lock); gnext is elsewhere,
 * found by the class (location.c loc_gnext: a record's class never changes). */
#define RSAN_LOC_COMPACT_FACTS 3
#define RSAN_MSC_BOTTOM 0 /* msc_kind: Msc = ⊥ (version 0, no entries) */
#define RSAN_MSC_SNAP 1   /* a shared clock, differences but the first unused (0, 0) */
#define RSAN_MSC_INLINE 2 /* an inline clock of at most 4 entries, each < 2^32: msc_e (and n, cap, ver) */
typedef struct __attribute__((aligned(64))) rsan_loc_compact {
  rsan_spin lock;
  uint8_t fcap;    /* RSAN_FACTS, as a cleared record's */
  uint8_t cls;     /* RSAN_LOC_COMPACT */
  uint8_t retired; /* RSAN_LOC_LIVE_COMPACT while live, 1 when retired */
  uint8_t init_known;
  uint8_t nfacts; /* the facts, in facts[0 .. nfacts) (none evicted) */
  uint8_t msc_kind;
  uint8_t msc_cap;
  uint8_t pad_;
  uint32_t msc_n;
  uintptr_t addr;
  uint64_t id;
  uint64_t msc_ver;
  uint64_t msc_in;
  union {
    uint64_t init_value;
    struct rsan_loc *free_next;
  };
  struct rsan_loc *gnext;
  union {
    struct { /* RSAN_MSC_SNAP: the clock's reference (moved with it) and its difference 0 */
      struct rsan_snap *msc_snap;
      uint32_t msc_dslot, msc_dep;
    };
    uint32_t msc_e[4]; /* RSAN_MSC_INLINE: its entries (those from msc_n on are 0) */
  };
  rsan_fact facts[RSAN_LOC_COMPACT_FACTS];
} rsan_loc_compact;
_Static_assert(sizeof(rsan_loc_compact) == 128, "a compact record is 2 cache lines");
_Static_assert(__builtin_offsetof(rsan_loc_compact, lock) == __builtin_offsetof(rsan_loc, lock) &&
                   __builtin_offsetof(rsan_loc_compact, fcap) == __builtin_offsetof(rsan_loc, fcap) &&
                   __builtin_offsetof(rsan_loc_compact, cls) == __builtin_offsetof(rsan_loc, cls) &&
                   __builtin_offsetof(rsan_loc_compact, retired) == __builtin_offsetof(rsan_loc, retired) &&
                   __builtin_offsetof(rsan_loc_compact, addr) == __builtin_offsetof(rsan_loc, addr),
               "what a stale reader reads is where every class has it");
_Static_assert(RSAN_LOC_COMPACT_FACTS < RSAN_FACTS && RSAN_CLK_INLINE <= UINT8_MAX,
               "a compact record's facts fit the inline window, an inline clock's cap a byte");
_Static_assert(RSAN_FACTS_MAX <= UINT8_MAX, "fcap is one byte");
_Static_assert(__builtin_offsetof(rsan_loc, facts_inline) == 64 && __builtin_offsetof(rsan_loc, Msc) == 128 &&
                   __builtin_offsetof(rsan_loc, id) == 192 && __builtin_offsetof(rsan_loc, Wsc) == 256 &&
                   __builtin_offsetof(rsan_loc, W) == 320,
               "the lines a size class drops are the record's last (docs/design/clocks.md §19)");
/* the bytes of a record of class cls */
static inline size_t rsan_loc_size(unsigned cls) {
  return cls == RSAN_LOC_COMPACT ? sizeof(rsan_loc_compact) : (size_t)(6 - cls) * 64;
}
/* W and Wsc, ⊥ when the record's class has no line for them (rsan_clk_bottom, clock.c) */
extern const rsan_clk rsan_clk_bottom RSAN_HIDDEN;
static inline const rsan_clk *rsan_loc_w(const rsan_loc *l) {
  return RSAN_LIKELY(l->cls == RSAN_LOC_FULL) ? &l->W : &rsan_clk_bottom;
}
static inline const rsan_clk *rsan_loc_wsc(const rsan_loc *l) {
  return RSAN_LIKELY(l->cls <= RSAN_LOC_NOW) ? &l->Wsc : &rsan_clk_bottom;
}
/* entries of the evicted-fact table (0: none) and its bookkeeping */
static inline int rsan_loc_evnarrow(const rsan_loc *l) { return l->evlog == RSAN_EV_NARROW; }
static inline uint32_t rsan_loc_evn(const rsan_loc *l) {
  return l->ev ? 1u << (rsan_loc_evnarrow(l) ? RSAN_EV_SLOTS_LOG : l->evlog) : 0;
}
static inline int rsan_loc_evdirect(const rsan_loc *l) { return l->evlog > RSAN_EV_SLOTS_LOG; }
static inline rsan_evicted32 *rsan_loc_ev32(const rsan_loc *l) { return (rsan_evicted32 *)l->ev; }
static inline rsan_evtail *rsan_loc_evtail(const rsan_loc *l) { /* l->ev not NULL, not narrow */
  return (rsan_evtail *)((char *)l->ev +
                         ((size_t)1 << l->evlog) * (sizeof(rsan_evicted) + sizeof(rsan_evfirst)));
}
/* the bytes of a table of evlog log (facts.c's layouts: entries, first tsU's, tail) */
static inline size_t rsan_ev_bytes_of(unsigned log) {
  if (log == RSAN_EV_NARROW)
    return RSAN_EV_SLOTS * (sizeof(rsan_evicted32) + sizeof(uint32_t)) + sizeof(rsan_evbound);
  return ((size_t)1 << log) * (sizeof(rsan_evicted) + sizeof(rsan_evfirst)) + sizeof(rsan_evtail);
}
static inline size_t rsan_loc_ev_bytes(const rsan_loc *l) { return l->ev ? rsan_ev_bytes_of(l->evlog) : 0; }

/* The write history is a ring of RSAN_HIST entries, write k in entry k % RSAN_HIST, that
 * grows 2 -> 4 -> ... -> RSAN_HIST entries with the writes (history.c): after k writes it
 * has the smallest power of 2 >= max(k, 2) entries, at most RSAN_HIST (2 entries: the
 * smallest ring, 64 bytes, one line). Exact: while k < RSAN_HIST
 * the fixed ring's entries from k on are empty (ts 0), which every reader skips, and each
 * write is at the index it had there, so every scan sees the same writes in the same order.
 * hist_next counts the writes; l->hist is NULL exactly until the first one, so hist_next = 0
 * with a ring means 2^32 writes (a full ring). */
_Static_assert(RSAN_HIST >= 2 && (RSAN_HIST & (RSAN_HIST - 1)) == 0, "RSAN_HIST divides 2^32");
static inline int rsan_hist_len(const rsan_loc *l) {
  uint32_t k = l->hist_next;
  if (!l->hist) return 0;
  if (k >= RSAN_HIST || k == 0) return RSAN_HIST;
  return k <= 2 ? 2 : 1 << (32 - __builtin_clz(k - 1));
}
/* history.c: the entry index of write k = hist_next < RSAN_HIST, the ring grown first when
 * it is full (k = 0 with a ring: after 2^32 writes, RSAN_HIST: the same entry) */
uint32_t rsan_hist_prepare(rsan_loc *l);
/* the entry of the next write, hist_next counted; the first RSAN_HIST writes out of line */
static inline rsan_hist *rsan_hist_next(rsan_loc *l) {
  uint32_t k = l->hist_next;
  if (RSAN_UNLIKELY(k < RSAN_HIST)) k = rsan_hist_prepare(l);
  l->hist_next = k + 1;
  return &l->hist[k % RSAN_HIST];
}

/* the window's ring (rsan_loc.facts_inline / facts_ext) */
static inline rsan_fact *rsan_loc_facts(const rsan_loc *l) {
  return l->fcap > RSAN_FACTS ? l->facts_ext : (rsan_fact *)l->facts_inline;
}
/* Msc(x): Wsc's clock while they are equal (after a write, rules.c) */
static inline const rsan_clk *rsan_loc_msc(const rsan_loc *l) { return l->msc_wsc ? &l->Wsc : &l->Msc; }

/* Returns the location of addr, locked (created on first touch), its record of class
 * RSAN_LOC_FULL: for every caller but the four atomic entry points of atomic.c, which take
 * rsan_loc_acquire_i's record of any class and promote it as the operation needs
 * (rsan_loc_fit). */
rsan_loc *rsan_loc_acquire(uintptr_t addr);
/* location_compact.c: whether a COLD record's state fits a compact record, and the moves
 * (both records locked; n cleared): pack o into compact n, unpack compact o into n (a record
 * of a class up to RSAN_LOC_COLD), each leaving o owning nothing; a compact record cleared */
int rsan_loc_fits_compact(const rsan_loc *l);
void rsan_loc_pack(rsan_loc_compact *n, rsan_loc *o);
void rsan_loc_unpack(rsan_loc *n, rsan_loc_compact *o);
void rsan_loc_compact_clear(rsan_loc_compact *c);
/* location.c: after a load that added a fact to addr's record (no lock held), that record
 * replaced by a compact one when it is a COLD record that fits (docs/design/clocks.md §21) */
void rsan_loc_shrink(uintptr_t addr);
/* location.c: l (locked, of a class above cls) is replaced by a record of class cls
 * with the same state, which is returned locked; l is unlocked and retired */
rsan_loc *rsan_loc_promote(rsan_loc *l, unsigned cls);
/* l, or its promotion when its class is above cls (l locked) */
static inline __attribute__((always_inline)) rsan_loc *rsan_loc_fit(rsan_loc *l, unsigned cls) {
  if (RSAN_UNLIKELY(l->cls > cls)) l = rsan_loc_promote(l, cls);
  return l;
}
/* The table (location.c): a directory of 16 MiB regions of the 47-bit user space, each with
 * the chain head of every 8-byte granule */
#define RSAN_LT_USER_BITS 47
#define RSAN_LT_REGION_SHIFT 24 /* 16 MiB regions: a 64 MiB directory (the race shadow reserves 1 GiB) */
#define RSAN_LT_NREGIONS (1ull << (RSAN_LT_USER_BITS - RSAN_LT_REGION_SHIFT))
#define RSAN_LT_GRANULE_SHIFT 3
#define RSAN_LT_PAGE_SHIFT 12
#define RSAN_LT_REGION_SLOTS (1u << (RSAN_LT_REGION_SHIFT - RSAN_LT_GRANULE_SHIFT))
#define RSAN_LT_REGION_PAGES (1u << (RSAN_LT_REGION_SHIFT - RSAN_LT_PAGE_SHIFT))
typedef struct rsan_lt_region {
  uint32_t total;                      /* live locations in the region */
  uint32_t page[RSAN_LT_REGION_PAGES]; /* live locations per 4 KiB of user memory */
  rsan_loc *slot[RSAN_LT_REGION_SLOTS];
} rsan_lt_region;
extern rsan_lt_region **rsan_lt_directory RSAN_HIDDEN;
/* location.c: rsan_loc_acquire_c's other cases; a location made here is made in class cls */
rsan_loc *rsan_loc_acquire_slow(uintptr_t addr, unsigned cls);
/* A line the operation will write, fetched for ownership (PREFETCHW where the processor has
 * it, rsan_prefetchw_ok; a read prefetch elsewhere) */
extern uint8_t rsan_prefetchw_ok RSAN_HIDDEN;
static inline __attribute__((always_inline)) void rsan_prefetchw_x(const void *p, int w) {
#if defined(__x86_64__)
  if (w) {
    __asm__("prefetchw %0" : : "m"(*(const char *)p));
    return;
  }
#endif
  (void)w;
  __builtin_prefetch(p, 1);
}
static inline __attribute__((always_inline)) void rsan_prefetchw(const void *p) {
  rsan_prefetchw_x(p, RSAN_LIKELY(rsan_prefetchw_ok));
}
/* The record's lines an operation asks for (docs/design/clocks.md §23), as masks (bit i: line
 * i; line 0 is the lock's, which the compare-and-swap fetches for ownership):
 * - before the lock's compare-and-swap, from the record's address alone, for ownership: lines
 *   1-3 (every class but the compact one has them; the fact, Msc, msc_in are written there),
 *   and for a write line 4 (Wsc, written by every write: its class has the line, or the record
 *   is promoted and this was only a hint);
 * - after the lock, once the class is known (a smaller record's next lines are another
 *   record's): what the class has beyond that, for ownership by a write (W), read by a load.
 * Every line an operation writes is among them (test_record_lines.py), so no store waits for
 * a line to be found out. Lines that do not exist are never asked for after the lock; before
 * it, only a compact record's lines 2-3 (its neighbour's) and a write's line 4 of a record
 * about to be promoted can be: a hint, no value depends on a prefetch. */
#define RSAN_LINES_EARLY(wr) ((wr) ? 0x1eu : 0x0eu)
static inline __attribute__((always_inline)) unsigned rsan_loc_lines_late(unsigned cls, int wr) {
  unsigned has = cls == RSAN_LOC_FULL ? 0x3fu : cls == RSAN_LOC_NOW ? 0x1fu : 0;
  return has & ~(RSAN_LINES_EARLY(wr) | 1u);
}
/* The early lines and the program's memory at addr (for ownership by a write), asked for just
 * before the lock: their transfers overlap the lock line's instead of queueing behind it. */
static inline __attribute__((always_inline)) void rsan_loc_prefetch_early(const rsan_loc *l, uintptr_t addr,
                                                                          int wr) {
  const char *c = (const char *)l;
  if (RSAN_LIKELY(rsan_prefetchw_ok)) { /* (one test for all: the flag never changes) */
    for (int i = 1; i < 6; i++)
      if (RSAN_LINES_EARLY(wr) >> i & 1) rsan_prefetchw_x(c + 64 * i, 1);
    if (wr) rsan_prefetchw_x((const void *)addr, 1);
  } else {
    for (int i = 1; i < 6; i++)
      if (RSAN_LINES_EARLY(wr) >> i & 1) rsan_prefetchw_x(c + 64 * i, 0);
    if (wr) rsan_prefetchw_x((const void *)addr, 0);
  }
  if (!wr) __builtin_prefetch((const void *)addr, 0);
}
/* the late lines, once l is locked */
static inline __attribute__((always_inline)) void rsan_loc_prefetch_lines(const rsan_loc *l, int wr) {
  const char *c = (const char *)l;
  unsigned m = rsan_loc_lines_late(l->cls, wr);
  for (int i = 4; i < 6; i++)
    if (m >> i & 1) {
      if (wr) rsan_prefetchw(c + 64 * i);
      else __builtin_prefetch(c + 64 * i, 0);
    }
}
/* The location at addr, locked (rsan_loc_acquire; inline in the atomic entry points,
 * docs/design/clocks.md §17). The common case, a granule with one location: lock the chain's
 * head first and check it under the lock (not retired, the address). Reading the address before
 * locking would fetch line 0 shared and then again exclusive for the lock: two transfers of a
 * line another thread wrote. Locking a record that turns out to be another location's (a
 * neighbour in the granule, or recycled meanwhile) is harmless: records are type-stable, and
 * nothing else is held here. Anything else (rsan_loc_lookup_i: NULL) goes to
 * rsan_loc_acquire_slow, which makes a missing location in class cls (the class the operation
 * needs: no promotion right after). */
static inline __attribute__((always_inline)) rsan_loc *rsan_loc_lookup_c(uintptr_t addr, int wr) {
  uint64_t r = addr >> RSAN_LT_REGION_SHIFT;
  rsan_lt_region **d = __atomic_load_n(&rsan_lt_directory, __ATOMIC_ACQUIRE);
  if (RSAN_LIKELY(d != NULL && r < RSAN_LT_NREGIONS)) {
    rsan_lt_region *g = __atomic_load_n(&d[r], __ATOMIC_ACQUIRE);
    if (RSAN_LIKELY(g != NULL)) {
      rsan_loc *l = __atomic_load_n(
          &g->slot[(addr & ((1u << RSAN_LT_REGION_SHIFT) - 1)) >> RSAN_LT_GRANULE_SHIFT], __ATOMIC_ACQUIRE);
      if (RSAN_LIKELY(l != NULL)) {
        rsan_loc_prefetch_early(l, addr, wr);
        rsan_spin_lock(&l->lock);
        if (RSAN_LIKELY(!l->retired && l->addr == addr)) {
          rsan_loc_prefetch_lines(l, wr);
          return l;
        }
        rsan_spin_unlock(&l->lock);
      }
    }
  }
  return NULL;
}
static inline __attribute__((always_inline)) rsan_loc *rsan_loc_lookup_i(uintptr_t addr) {
  return rsan_loc_lookup_c(addr, 0);
}
static inline __attribute__((always_inline)) rsan_loc *rsan_loc_acquire_c(uintptr_t addr, unsigned cls) {
  rsan_loc *l = rsan_loc_lookup_c(addr, cls != RSAN_LOC_COLD);
  return RSAN_LIKELY(l != NULL) ? l : rsan_loc_acquire_slow(addr, cls);
}
/* the same for a load: a location it makes is made in the smallest class */
static inline __attribute__((always_inline)) rsan_loc *rsan_loc_acquire_i(uintptr_t addr) {
  return rsan_loc_acquire_c(addr, RSAN_LOC_COLD);
}
static inline void rsan_loc_release(rsan_loc *l) { rsan_spin_unlock(&l->lock); }
rsan_loc *rsan_loc_fence(void); /* the SC-fence location F (id 0), not in the table */
uint64_t rsan_loc_count(void);  /* live locations in the table */
/* bumped before any location is retired (free, the tests' reset): a thread that saw x live
 * when it read a value knows x is still that location while it reads the same value */
extern uint64_t rsan_loc_retire_gen RSAN_HIDDEN;
void rsan_loc_reset_all(void);  /* tests: drop every location, restart ids at 1 */
/* id of the location at addr if present, else 0 (tests) */
uint64_t rsan_loc_peek_id(uintptr_t addr);
/* the live location at addr, locked, or NULL (tests; never creates one) */
rsan_loc *rsan_loc_peek(uintptr_t addr);
/* facts.c: the evicted-fact table emptied, its memory kept (a retired record's) */
void rsan_loc_ev_clear(rsan_loc *l);
/* Facts (docs/design/clocks.md): adds the fact (slot, epoch, stamp(x), stampU(x)) */
void rsan_loc_add_fact(rsan_loc *l, uint32_t slot, uint64_t epoch);
/* The first i with evslot[i] == (uint16_t)s1, -1 if none (the sparse table's entry of a slot,
 * as ev_entry finds it; a slot has at most one). Its four 16-bit lanes compared at once
 * (docs/design/clocks.md §17): with x = the lanes XOR s1 in every lane, the borrow trick flags
 * lane j when x_j = 0; a lane above a zero lane may be flagged too (the borrow), never one
 * below the lowest zero lane (x_j >= 1 there: x_j - 1 borrows nothing, and has its top bit
 * set only when x_j has it too), so the lowest flag is the first match. A slot whose s1 does
 * not fit 16 bits never uses what this finds (rsan_loc_add_fact_i goes out of line). */
static inline int rsan_evslot_find(const uint16_t *evslot, uint32_t s1) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && RSAN_EV_SLOTS == 4
  const uint64_t ones = 0x0001000100010001ull;
  uint64_t w;
  __builtin_memcpy(&w, evslot, sizeof w);
  uint64_t x = w ^ ((uint64_t)(uint16_t)s1 * ones);
  uint64_t z = (x - ones) & ~x & (ones << 15);
  return z ? (int)(__builtin_ctzll(z) >> 4) : -1;
#else
  for (int i = 0; i < RSAN_EV_SLOTS; i++)
    if (evslot[i] == (uint16_t)s1) return i;
  return -1;
#endif
}
/* The same, with its steady cases inline (docs/design/clocks.md §12): a window with room, or
 * a full one (no growth due) whose oldest fact's slot already has an evicted-facts entry in
 * use; the stores are rsan_loc_add_fact's for those cases, anything else calls it. */
static inline __attribute__((always_inline)) void rsan_loc_add_fact_i(rsan_loc *l, uint32_t slot,
                                                                      uint64_t epoch) {
  rsan_fact *fs = rsan_loc_facts(l);
  uint64_t n = l->nfacts, mask = (uint64_t)l->fcap - 1;
  /* facts come in x's lock order: timestamps never decrease (rsan_loc_add_fact) */
  RSAN_ASSERT(n == l->fold ||
              (l->stamp - rsan_fact_ts(l->stamp, fs[(n - 1) & mask].ts16) < RSAN_FACTS_MAX &&
               l->stampU - rsan_fact_ts(l->stampU, fs[(n - 1) & mask].tsU16) < RSAN_FACTS_MAX));
  if (n - l->fold == l->fcap) { /* full */
    if (RSAN_UNLIKELY(l->grow && l->fcap < RSAN_FACTS_MAX) || RSAN_UNLIKELY(!l->ev)) {
      rsan_loc_add_fact(l, slot, epoch);
      return;
    }
    /* full: fold = n - fcap, so the oldest fact is at the new fact's place (n & mask) */
    const rsan_fact *old = &fs[n & mask];
    rsan_evicted *e = NULL;
    if (rsan_loc_evdirect(l)) {
      if (old->slot < 1u << l->evlog) e = &l->ev[old->slot];
      l->ev_hint = fs[(n + 1) & mask].slot; /* the next one to leave */
    } else {
      int i = rsan_evslot_find(l->evslot, old->slot + 1);
      if (i >= 0 && rsan_loc_evnarrow(l)) { /* the same stores, in 32 bits while they fit */
        /* one test for the values and the slot: the timestamps are at most the stamps, and
         * slot + 1 < UINT16_MAX iff (slot + 2) << 16 < 2^32 */
        uint64_t wslot = ((uint64_t)old->slot + 2) << 16;
        if (RSAN_UNLIKELY(!rsan_ev_fits32(old->epoch | wslot, l->stamp, l->stampU))) {
          rsan_loc_add_fact(l, slot, epoch); /* widens the table */
          return;
        }
        rsan_evicted32 *e32 = &rsan_loc_ev32(l)[i];
        uint32_t h0 = e32->h[0].epoch;
        if (RSAN_UNLIKELY(!h0)) {
          rsan_loc_add_fact(l, slot, epoch); /* a new entry */
          return;
        }
        unsigned k = h0 > e32->h[1].epoch; /* rsan_ev_next */
        e32->h[k].epoch = (uint32_t)old->epoch;
        e32->h[k].ts = (uint32_t)l->stamp - (uint16_t)((uint16_t)l->stamp - old->ts16); /* rsan_fact_ts */
        e32->h[k].tsU = (uint32_t)l->stampU - (uint16_t)((uint16_t)l->stampU - old->tsU16);
        l->fold = n - mask;
        goto append;
      }
      if (i >= 0) e = &l->ev[i];
    }
    /* a new entry, a victim, a conversion, a slot evslot cannot name: out of line */
    if (RSAN_UNLIKELY(!e || !rsan_ev_used(e) || old->slot + 1 >= UINT16_MAX)) {
      rsan_loc_add_fact(l, slot, epoch);
      return;
    }
    unsigned k = rsan_ev_next(e);
    e->h[k].epoch = old->epoch;
    e->h[k].ts = rsan_fact_ts(l->stamp, old->ts16);
    e->h[k].tsU = rsan_fact_ts(l->stampU, old->tsU16);
    l->fold = n - mask; /* fold + 1, as fold = n - fcap */
  }
append:;
  rsan_fact *f = &fs[n & mask];
  f->epoch = epoch;
  rsan_fact_set_slot_ts(f, slot, l->stamp, l->stampU);
  l->nfacts = n + 1;
}
/* For a hot location (its evicted facts indexed by slot: many threads, a grown window), the
 * lines the operation's fact will touch, fetched at once while its check and rules run: the
 * window's newest fact (the check reads it), the place of the next (the oldest fact's, when
 * the window is full) and the evicted-facts entry of the oldest fact's slot, from the record's
 * hint (a hint: no value depends on any of it). A sparse table is small and its location's
 * window inline: nothing to fetch. */
static inline void rsan_loc_prefetch_eviction(const rsan_loc *l) {
  if (!rsan_loc_evdirect(l)) return; /* (a direct table: ev allocated, facts_ext the window) */
  const rsan_fact *fs = l->facts_ext;
  uint64_t n = l->nfacts, mask = l->fcap - 1u;
  __builtin_prefetch(&fs[(n - 1) & mask], 0);
  rsan_prefetchw(&fs[n & mask]);
  if (n - l->fold == l->fcap && l->ev_hint < 1u << l->evlog) rsan_prefetchw(&l->ev[l->ev_hint]);
}
/* The epoch of slot's fact on x with the current (stamp, stampU), 0 when it has none: a new
 * one would add nothing (a repeated read of the same write). The facts with the current
 * timestamps are the newest ones (timestamps never decrease); low bits suffice, a window fact
 * being less than 2^16 writes old. */
static inline uint64_t rsan_loc_current_fact(const rsan_loc *l, uint32_t slot) {
  const rsan_fact *fs = rsan_loc_facts(l);
  uint64_t nf = l->nfacts, k = nf - l->fold, mask = (uint64_t)l->fcap - 1;
  uint16_t ts = (uint16_t)l->stamp, tsU = (uint16_t)l->stampU;
  for (uint64_t i = 1; i <= k; i++) {
    const rsan_fact *f = &fs[(nf - i) & mask];
    if (f->ts16 != ts || f->tsU16 != tsU) return 0;
    if (f->slot == slot) return f->epoch;
  }
  return 0;
}
/* c's value at x (bounds; exact unless the window overflowed, see rsan_q) */
void rsan_loc_query(rsan_loc *l, const rsan_clk *c, rsan_q *q); /* l locked (may set l->grow) */
/* facts.c: 1 when the newest of the window's facts after its newest one (up to RSAN_SAME_SCAN
 * of them) that c or sc contains is contained in both (rsan_view_same_at); l locked */
#define RSAN_SAME_SCAN 8
int rsan_loc_same_older(const rsan_loc *l, const rsan_clk *c, const rsan_clk *sc);
/* facts.c: 1 when rsan_loc_query2(l, c, sc) would answer both clocks from one window fact, the
 * same for both (the tests' build checks rsan_view_same_at by it; reads only) */
int rsan_loc_same_checked(const rsan_loc *l, const rsan_clk *c, const rsan_clk *sc);
void rsan_loc_query2(rsan_loc *l, const rsan_clk *a, const rsan_clk *b, rsan_q *qa,
                     rsan_q *qb); /* one scan */
/* checks whose verdict the bounds could not decide (counted, never reported: a miss) */
extern uint64_t rsan_undecided_checks;
extern uint64_t rsan_inexact_queries; /* queries answered with bounds (lo < hi) */
void rsan_loc_print_stats(void);      /* one line on stderr (verbosity >= 1, at exit) */
void rsan_loc_print_census(void); /* location_census.c: how the live records are used (the same) */
/* location.c: every record made so far, live or free, passed to fn under its lock (census) */
void rsan_loc_for_each_made(void (*fn)(rsan_loc *l, void *arg), void *arg);
uint64_t rsan_loc_promotions(void); /* records replaced by a bigger class so far */
uint64_t rsan_loc_shrinks(void);    /* cold records replaced by compact ones so far */

#endif

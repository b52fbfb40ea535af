/* Await loops (passes/awaitloops.py; docs/design/exploration.md §7, docs/scheduling.md "Await
 * loops"). A marked loop's iterations only load atomics and make SC fences, and an iteration is
 * a function of its header's values (passed to __rsan_await_head) and of what its loads read.
 * Under sched=dfs (sched_await=1) the scheduler follows each thread's iterations:
 *
 * - an iteration is a *repeat* when it made only loads and SC fences, its first step is an SC
 *   fence or it made none, and it read the same locations in the same order, each from the
 *   same write (the same write generation of its 8-byte word), as the iteration before it;
 * - at the header after three repeats in a row the thread takes an *await* step (kind "await",
 *   its address the words the last iteration read), enabled once one of those words was
 *   written after the iteration read it. The step itself does nothing.
 *
 * Rotated units (§10). What is compared is a *unit*: an iteration, except after an iteration
 * whose first step is a load and that fenced, where the unit goes on to the next SC fence
 * (rsan_await_fence, before its scheduling point) or the next iteration start, whichever comes
 * first; a repeat also needs the same *mark* (how many of its reads came before its last
 * iteration start). So a loop `load; fence; load` compares `fence; load | load` and parks
 * before its fence; without this it never parked and spun to max_steps. Not under sched_await=-1;
 * under -2 a rotated unit blocks only when it ends in the state it began in (blocks()).
 *
 * Wide iterations (docs/design/exploration.md §13): a unit's reads, and the write
 * generations, are kept in memory that grows (mmap: reads_room, gen_grow), so a unit of any
 * length up to AW_READS_MAX compares; the trace names every word an await step waits on.
 *
 * Blocked iterations (docs/design/exploration.md §9). Under sched_await=-2 a thread blocks for
 * ever after a *failed* iteration (one that came back to the header with its values) whose
 * reads imported nothing into its hb_SC clock (Wsc(x) ⊑ Tsc before each of its loads) and whose
 * first step is an SC fence when it made one: the reports of the runs in which it goes on are
 * those of runs with the iteration left out or with the thread stopped after it (§9). Under
 * the closure (sched_closure != 0) the import condition depends on the order of the SC fences,
 * which the closure varies, so there a load must re-read its previous iteration's write instead
 * (reads_new, at the end; §11).
 * sched_await=-1 (measurements only, not exact) blocks after any failed iteration: GenMC's
 * blocked iterations without their monitor effects. A run whose only live threads are so
 * blocked ends as an exit when one of them has a word written since it read it (the reversal of
 * that read with the write runs the iteration that reads it), as a deadlock otherwise.
 *
 * A word's write generation counts the steps chosen that may write it (w = 1: stores, RMW and
 * CAS attempts, locks...): a failed CAS counts too, which can only end a run of repeats early.
 * Everything here runs under rsan_sched.lock. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "rsan_interface.h"
#include "rsan_sched_closure_hb.h"
#include "rsan_sched_internal.h"

/* repeats in a row before the await step (docs/design/exploration.md §7: why these) */
#define AW_PARK 3       /* iterations with an SC fence */
#define AW_PARK_PLAIN 2 /* iterations without */
#define AW_READS_FIRST 256 /* a unit's first read buffer: one page */
#define GEN_BITS_FIRST 12 /* the generation table's first size (static), log2 */
#define GEN_BITS_MAX 21   /* and its largest (32 MiB: a million words written) */

/* Memory that grows under rsan_sched.lock: mmap, never malloc (a thread of the program may be
 * stopped inside malloc holding its lock, or a handler may run there; mmap takes no lock of
 * user space), zeroed. NULL when the system has none. */
static void *map_zeroed(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* room for read n of a unit in *buf (capacity *cap): doubles it when full, up to AW_READS_MAX.
 * 0: no room (the unit then never repeats: a hang, never a false proof) */
static int reads_room(aw_read **buf, int *cap, int n) {
  if (n >= AW_READS_MAX) return 0;
  if (n < *cap) return 1;
  int ncap = *cap ? 2 * *cap : AW_READS_FIRST;
  aw_read *p = map_zeroed((size_t)ncap * sizeof *p);
  if (!p) return 0;
  if (*buf) {
    memcpy(p, *buf, (size_t)n * sizeof *p);
    munmap(*buf, (size_t)*cap * sizeof **buf);
  }
  *buf = p;
  *cap = ncap;
  return 1;
}

/* Write generations of the words written under the scheduler: open addressing, linear probes,
 * at most half full (it doubles: a lookup ends at a free slot within a few probes). */
typedef struct gen_entry {
  uintptr_t word; /* 0: a free slot (word 0 holds no location) */
  uint64_t val;
} gen_entry;
static gen_entry gen_first[1u << GEN_BITS_FIRST];
static gen_entry *gens = gen_first;
static int gen_bits = GEN_BITS_FIRST;
static size_t gen_used;
static int gen_full; /* a word found no room (GEN_BITS_MAX): from then on no read repeats another */
static uint64_t gen_fresh = 1ull << 62;

/* A word's first slot: the words of one 256-byte block in consecutive slots from a base that
 * hashes the block, so that a program's variables, which lie close together, share the table's
 * pages (each page a run writes is a fault: it is a fork of the fork server). */
static gen_entry *gen_find(gen_entry *table, int bits, uintptr_t word) {
  const size_t mask = ((size_t)1 << bits) - 1;
  size_t k = ((size_t)(((word >> 5) * 0x9E3779B97F4A7C15ull) >> (64 - bits)) + (size_t)(word & 31)) & mask;
  while (table[k].word && table[k].word != word) k = (k + 1) & mask;
  return &table[k];
}

static int gen_grow(void) {
  if (gen_bits >= GEN_BITS_MAX) return 0;
  gen_entry *t = map_zeroed(sizeof *t << (gen_bits + 1));
  if (!t) return 0;
  for (size_t i = 0; i < (size_t)1 << gen_bits; i++)
    if (gens[i].word) *gen_find(t, gen_bits + 1, gens[i].word) = gens[i];
  if (gens != gen_first) munmap(gens, sizeof *gens << gen_bits);
  gens = t;
  gen_bits++;
  return 1;
}

static uint64_t *gen_slot(uintptr_t word, int insert) {
  gen_entry *e = gen_find(gens, gen_bits, word);
  if (e->word) return &e->val;
  if (!insert) return NULL;
  if (2 * (gen_used + 1) > (size_t)1 << gen_bits) {
    if (!gen_grow()) {
      gen_full = 1;
      return NULL;
    }
    e = gen_find(gens, gen_bits, word);
  }
  gen_used++;
  e->word = word;
  e->val = 0;
  return &e->val;
}

/* the generation of word; after an overflow a new value each time (never the same write) */
static uint64_t gen_of(uintptr_t word) {
  if (gen_full) return gen_fresh++;
  uint64_t *g = gen_slot(word, 0);
  return g ? *g : 0;
}

static int writes_memory(int kind, uintptr_t addr, int w) {
  return w && addr && kind != RSAN_SK_SPAWN && kind != RSAN_SK_JOIN && kind != RSAN_SK_EXIT &&
         kind != RSAN_SK_EXIT_PROCESS && kind != RSAN_SK_FENCE && kind != RSAN_SK_FENCE_SC;
}

/* the blocked-iterations mode: -2 (exact, today's relation), -1 (measurements), 0 none */
static int blocking(void) {
  int f = rsan_sched_flag.sched_await;
  return f < 0 ? f : 0; /* -2 under the closure: condition (i) as reads_new (§11) */
}

/* c's pending load would import something into its thread's Tsc: Wsc(x) ⋢ Tsc (vector clocks:
 * ⊑ between them implies it between the clocks' values). Taken when the step is chosen, which
 * is the state right before the load: no other thread runs in between. */
static int imports(const sched_thread *c) {
  rsan_loc *l = rsan_loc_lookup_i(c->addr);
  if (!l) return 0; /* no record yet: never written, Wsc(x) = ⊥ */
  int out = !rsan_clk_leq(rsan_loc_wsc(l), &c->t->Tsc);
  rsan_loc_release(l);
  return out;
}

static int reads_new(const sched_thread *c); /* at the end: condition (i) under the closure */

void rsan_await_chosen(sched_thread *c) {
  if (!rsan_sched_flag.sched_await || !rsan_sched_dfs()) return; /* no await step: no generations */
  if (writes_memory(c->kind, c->addr, c->w)) {
    uint64_t *g = gen_slot(c->addr >> 3, 1);
    if (g) ++*g;
  }
  if (c->kind == RSAN_SK_AWAIT) {
    /* the closure's log names the word whose write enabled it (sched_closure.c orders the
     * step after that write, as ops_dependent orders a load) */
    for (int i = 0; i < c->aw_prev_n; i++)
      if (gen_of(c->aw_prev[i].addr >> 3) != c->aw_prev[i].gen) {
        c->addr = c->aw_prev[i].addr;
        break;
      }
    return;
  }
  if (!c->aw_loop) return;
  if (c->kind == RSAN_SK_LOAD) {
    if (blocking() == -2 && !c->aw_imports)
      c->aw_imports = rsan_sched_flag.sched_closure ? reads_new(c) && rsan_closure_hb_imports(c) : imports(c);
    if (c->aw_n >= 0 && !reads_room(&c->aw_cur, &c->aw_cur_cap, c->aw_n)) c->aw_n = -1;
    if (c->aw_n >= 0) {
      c->aw_cur[c->aw_n].addr = c->addr;
      c->aw_cur[c->aw_n++].gen = gen_of(c->addr >> 3);
    }
  } else if (c->kind == RSAN_SK_FENCE_SC) {
    if (!c->aw_steps) c->aw_first_fence = 1;
    if (!c->aw_it_steps) c->aw_it_first_fence = 1;
    c->aw_any_fence = c->aw_it_any_fence = 1;
  } else { /* not a step of the loop: the thread left it */
    c->aw_pure = 0;
    c->aw_loop = 0;
    c->aw_iterating = 0;
    c->aw_rotating = 0;
  }
  c->aw_steps++;
  c->aw_it_steps++;
}

int rsan_await_enabled(const sched_thread *s) {
  if (s->aw_blocked) return 0;
  for (int i = 0; i < s->aw_prev_n; i++)
    if (gen_of(s->aw_prev[i].addr >> 3) != s->aw_prev[i].gen) return 1;
  return s->aw_prev_n <= 0; /* nothing to wait on (never parked so) */
}

void rsan_await_format(const sched_thread *s, void (*emit)(const char *, size_t)) {
  char word[24];
  for (int i = 0; i < s->aw_prev_n; i++) {
    /* a word named already is left out (among the 64 reads before it: the trace reads the
     * words as a set, so a repeat further back costs characters, never a word) */
    int seen = 0;
    for (int j = i > 64 ? i - 64 : 0; j < i && !seen; j++) seen = s->aw_prev[j].addr == s->aw_prev[i].addr;
    if (!seen)
      emit(word, (size_t)snprintf(word, sizeof word, "%s0x%llx", i ? "+" : "",
                                  (unsigned long long)s->aw_prev[i].addr));
  }
}

int rsan_await_woken_by(const sched_thread *s, int kind, uintptr_t addr, int w) {
  if (kind == RSAN_SK_EXIT_PROCESS) return 1;
  if (!writes_memory(kind, addr, w)) return 0;
  for (int i = 0; i < s->aw_prev_n; i++)
    if ((s->aw_prev[i].addr >> 3) == (addr >> 3)) return 1;
  return 0;
}

int rsan_await_counting(const sched_thread *s) {
  /* aw_loop is kept while the thread only loads and fences after the loop too: the flag may
   * then name a thread whose repeats are equivalent, which costs schedules, never a class */
  return s->yielding && s->yield_through_head && s->aw_loop && s->aw_bounded && !s->aw_iterating &&
         rsan_sched_flag.sched_await && rsan_sched_dfs();
}

/* a new unit: an iteration, or from the first SC fence of one to that of the next (§10) */
static void start_unit(sched_thread *s) {
  s->aw_n = 0;
  s->aw_mark = -1;
  s->aw_imports = 0;
  s->aw_pure = 1;
  s->aw_steps = s->aw_first_fence = s->aw_any_fence = 0;
}

/* the unit that just ended repeats the one before it: the same reads, each from the same write,
 * and its last iteration start after as many of them (so that the thread's state at its end, a
 * function of the reads after that start, is the same: §10) */
static int repeats(const sched_thread *s) {
  if (!s->aw_pure || s->aw_n <= 0 || s->aw_n != s->aw_prev_n || s->aw_mark != s->aw_prev_mark) return 0;
  if (s->aw_any_fence && !s->aw_first_fence) return 0;
  for (int i = 0; i < s->aw_n; i++)
    if (s->aw_cur[i].addr != s->aw_prev[i].addr || s->aw_cur[i].gen != s->aw_prev[i].gen) return 0;
  return 1;
}

/* A rotated unit that ended at an SC fence ends in the state it began in: its reads after its
 * iteration start re-read those of the unit before it after that unit's, which ended at an SC
 * fence too (the state at such a fence is a function of those reads: §10) */
static int ends_as_it_began(const sched_thread *s) {
  const int n = s->aw_n - s->aw_mark;
  if (s->aw_mark < 0 || s->aw_prev_mark < 0 || s->aw_prev_n < 0 || n != s->aw_prev_n - s->aw_prev_mark)
    return 0;
  for (int i = 0; i < n; i++) {
    const aw_read *a = &s->aw_cur[s->aw_mark + i], *b = &s->aw_prev[s->aw_prev_mark + i];
    if (a->addr != b->addr || a->gen != b->gen) return 0;
  }
  return 1;
}

/* §9 (sched_await=-2): the unit that just ended is a failed one that may block its thread. An
 * iteration (at_fence 0, no mark): it imported nothing and its first step is an SC fence if it
 * made one. A rotated unit (docs/design/exploration.md §13): it ended at an SC fence in the
 * state it began in, which it began with, and imported nothing. */
static int blocks(const sched_thread *s, int at_fence) {
  if (!s->aw_pure || s->aw_imports) return 0;
  if (s->aw_mark < 0) return !at_fence && (s->aw_first_fence || !s->aw_any_fence);
  return at_fence && s->aw_first_fence && ends_as_it_began(s);
}

/* The unit that just ended (at an iteration start, or at a rotated unit's SC fence: at_fence):
 * counts its repeat, keeps its reads for the next comparison and starts the next unit. 1: the
 * thread takes its await step now (or blocks, §9). Under lock. */
static int end_unit(sched_thread *s, int at_fence) {
  const int flag = rsan_sched_flag.sched_await;
  s->aw_repeats = repeats(s) ? s->aw_repeats + 1 : 0;
  int need = flag > 1 ? flag - 1 : s->aw_any_fence ? AW_PARK : AW_PARK_PLAIN;
  const int block = blocking() == -1 || (blocking() == -2 && blocks(s, at_fence));
  s->aw_prev_n = s->aw_pure ? s->aw_n : -1;
  s->aw_prev_mark = s->aw_mark;
  aw_read *reads = s->aw_prev; /* the unit's reads become the previous unit's: a swap */
  const int cap = s->aw_prev_cap;
  s->aw_prev = s->aw_cur;
  s->aw_prev_cap = s->aw_cur_cap;
  s->aw_cur = reads;
  s->aw_cur_cap = cap;
  start_unit(s);
  int park = (block || s->aw_repeats >= need) && s->aw_prev_n > 0;
  s->aw_blocked = park && block;
  return park;
}

RSAN_EXPORT void __rsan_await_head(uint64_t loop, uint32_t from_inside, uint64_t s0, uint64_t s1,
                                   uint64_t s2) {
  if (!__atomic_load_n(&rsan_sched_on, __ATOMIC_RELAXED) || !rsan_sched_flag.sched_await || !rsan_sched_dfs())
    return;
  /* A loop some path of which writes (awaitloops.py `pure_iterations`) is an await loop under
   * blocked iterations only: under the default its iterations would be steps until the third
   * repeat parks it, where unmarked its re-reads are yields, fewer schedules (Dekker's loop:
   * docs/design/exploration.md §22). Then the mark is not there. */
  if ((from_inside & 8) && !blocking()) return;
  const uint64_t st[3] = {s0, s1, s2};
  rsan_spin_lock(&rsan_sched.lock);
  sched_thread *s = rsan_sched.finished ? NULL : slot_of(rsan_thread_current());
  if (!s || s->state != ST_LIVE) {
    rsan_spin_unlock(&rsan_sched.lock);
    return;
  }
  const int bounded = (from_inside & 2) != 0; /* its exits depend on its header values */
  /* it lies in a counting loop that the passes left unmarked for it (awaitloops.py
   * select_nested): each of its instances is an iteration of that loop, so a yield on re-reads
   * made across them counts (rsan_await_counting), as it did in the outer loop */
  const int in_counting = (from_inside & 4) != 0;
  from_inside &= 1;
  if (!from_inside || s->aw_loop != loop) { /* a new instance of the loop */
    s->aw_loop = loop;
    s->aw_bounded = bounded || in_counting;
    if (in_counting) s->aw_heads++;
    memcpy(s->aw_state, st, sizeof st);
    s->aw_prev_n = s->aw_prev_mark = -1;
    s->aw_repeats = s->aw_iterating = s->aw_rotating = 0;
    s->aw_it_steps = s->aw_it_first_fence = s->aw_it_any_fence = 0;
    start_unit(s);
    rsan_spin_unlock(&rsan_sched.lock);
    return;
  }
  s->aw_heads++;
  if (memcmp(st, s->aw_state, sizeof st) != 0) { /* an inner loop's step, inside the iteration */
    rsan_spin_unlock(&rsan_sched.lock);
    return;
  }
  s->aw_iterating = 1;
  /* §10: after an iteration whose first step is a load and that fenced, the unit goes on to the
   * next iteration's first SC fence (rsan_await_fence), where the thread's state is a function
   * of the reads it made since this arrival; under sched_await=-2 too ("Wide iterations"), not under -1 */
  const int rotate = blocking() != -1 && s->aw_it_any_fence && !s->aw_it_first_fence;
  /* Under sched_await=-1 its re-reads are counted here, not as yields, only while its
   * iterations can repeat: a loop whose first step is a load and that fences never parks there
   * (no rotation), and yields as before §7 */
  s->aw_can_park = blocking() != -1 || (s->aw_pure && (s->aw_first_fence || !s->aw_any_fence));
  s->aw_it_steps = s->aw_it_first_fence = s->aw_it_any_fence = 0;
  s->aw_rotating = rotate;
  if (rotate) {
    s->aw_mark = s->aw_n;
    rsan_spin_unlock(&rsan_sched.lock);
    return;
  }
  const int park = end_unit(s, 0);
  uintptr_t first = park ? s->aw_prev[0].addr : 0;
  rsan_spin_unlock(&rsan_sched.lock);
  if (park) rsan_sched_point_blocking(RSAN_SK_AWAIT, (const void *)first, 0, SB_AWAIT, 0);
}

void rsan_await_fence(void) {
  if (!rsan_sched_flag.sched_await || !rsan_sched_dfs()) return;
  sched_thread *s = slot_of(rsan_thread_current()); /* its own slot: read without the lock */
  if (!s || !s->aw_rotating) return;
  rsan_spin_lock(&rsan_sched.lock);
  if (rsan_sched.finished || s->state != ST_LIVE || !s->aw_rotating) {
    rsan_spin_unlock(&rsan_sched.lock);
    return;
  }
  s->aw_rotating = 0;
  const int park = end_unit(s, 1);
  uintptr_t first = park ? s->aw_prev[0].addr : 0;
  rsan_spin_unlock(&rsan_sched.lock);
  if (park) rsan_sched_point_blocking(RSAN_SK_AWAIT, (const void *)first, 0, SB_AWAIT, 0);
}

int rsan_await_blocked_news(void) {
  for (int i = 0; i < rsan_sched.nthreads_max; i++) {
    const sched_thread *s = rsan_sched.threads[i];
    if (!s || s->state != ST_LIVE || !s->aw_blocked) continue;
    for (int k = 0; k < s->aw_prev_n; k++)
      if (gen_of(s->aw_prev[k].addr >> 3) != s->aw_prev[k].gen) return 1;
  }
  return 0;
}

/* Condition (i) of docs/design/exploration.md §9 under the F-order closure (sched_closure != 0;
 * §11): whether Wsc(x) ⊑ Tsc holds before a load depends on the order of the SC fences, which the
 * closure varies, so it is taken in a form that holds in every interleaving of the run's coarse
 * class: the load re-reads the write that a load of the same address read in the thread's
 * previous iteration (the same generation of its word: no write of the word since; that load
 * joined Wsc(x) into Tsc, Wsc(x) changes only at a write of x and Tsc only grows), or its write
 * comes before the thread's previous step in the coarse order (sched_closure_hb.c). */
static int reads_new(const sched_thread *c) {
  for (int i = 0; i < c->aw_prev_n; i++)
    if (c->aw_prev[i].addr == c->addr && c->aw_prev[i].gen == gen_of(c->addr >> 3)) return 0;
  return 1;
}

/* Data-race reports (algorithm.md §5; docs/interfaces.md §2, "kind": "race"). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rsan_explain.h"
#include "rsan_race.h"
#include "rsan_report.h"

/* ---- race reports (algorithm.md §5; docs/interfaces.md §2, "kind": "race") ---- */
uint64_t rsan_nraces;

/* "Atomic write", "Read", ... ("atomic write", "read" after "Previous") */
static const char *access_noun(int is_write, int is_atomic, int capital) {
  static const char *names[2][4] = {{"read", "write", "atomic read", "atomic write"},
                                    {"Read", "Write", "Atomic read", "Atomic write"}};
  return names[capital != 0][2 * (is_atomic != 0) + (is_write != 0)];
}

/* "Thread T2 (created by thread T0 at:" + its creation stack; the main thread has none */
static void text_thread(rsan_buf *b, int tid) {
  rsan_thread *th = rsan_thread_by_tid(tid);
  if (!th || th->parent_tid < 0) {
    rsan_buf_printf(b, "  Thread T%d (%s)\n", tid, tid == 0 ? "main thread" : "creation unknown");
    return;
  }
  rsan_buf_printf(b, "  Thread T%d created by thread T%d at:\n", tid, th->parent_tid);
  rsan_frames fr;
  rsan_frames_build(&fr, 0, th->create_stack, th->ncreate);
  rsan_text_frames(b, &fr);
}

static void json_thread(rsan_buf *b, int tid) {
  rsan_thread *th = rsan_thread_by_tid(tid);
  rsan_buf_printf(b, "{\"thread\": %d", tid);
  if (th && th->parent_tid >= 0) {
    rsan_frames fr;
    rsan_frames_build(&fr, 0, th->create_stack, th->ncreate);
    rsan_buf_printf(b, ", \"created_by\": %d", th->parent_tid);
    rsan_json_frame_fields(b, &fr);
  }
  rsan_buf_puts(b, "}");
}

static void json_race_side(rsan_buf *b, uint64_t site, int tid, int is_write, int is_atomic, int is_free,
                           int size, const rsan_frames *fr) {
  rsan_buf_printf(
      b, "{\"site\": \"0x%016llx\", \"thread\": %d, \"type\": \"%s\", \"atomic\": %s, \"size\": %d",
      (unsigned long long)site, tid, is_write ? "write" : "read", is_atomic ? "true" : "false", size);
  if (is_free) rsan_buf_puts(b, ", \"free\": true");
  rsan_json_frame_fields(b, fr);
  rsan_buf_puts(b, "}");
}

void rsan_report_race(rsan_race_info *r) {
  const char *type = r->is_write ? "write" : "read";
  /* one report per pair of sites, in either order */
  uint64_t a = r->site < r->prev_site ? r->site : r->prev_site;
  uint64_t bsite = r->site < r->prev_site ? r->prev_site : r->site;
  rsan_spin_lock(&rsan_report_lock);
  if (!rsan_dedup_insert(a, bsite, 3)) {
    rsan_spin_unlock(&rsan_report_lock);
    return;
  }
  rsan_frames acc, prev;
  rsan_frames_build(&acc, r->site, r->stack, r->nstack);
  rsan_frames_build(&prev, r->prev_site, r->prev_stack, r->prev_nstack);
  if (rsan_nsupps) {
    const rsan_frames *stacks[2] = {&acc, &prev};
    rsan_supp *sp = rsan_supp_find(RSAN_SUPP_RACE, stacks, 2);
    if (sp) {
      sp->hits++;
      rsan_nsuppressed++;
      rsan_json_suppressed("race", type, sp, a, bsite);
      rsan_spin_unlock(&rsan_report_lock);
      return;
    }
  }
  rsan_nreports++;
  rsan_nraces++;
  int pid = (int)getpid();
  char obj[600];
  int kind; /* rsan_location_name: 1 global, 2 heap, 3 a thread's stack, 0 unknown */
  rsan_block_info blk;
  rsan_location_name(obj, sizeof obj, r->addr, &kind, &blk);
  const char *obj_kind = kind == 1 ? "global" : kind == 2 ? "heap" : kind == 3 ? "stack" : "unknown";
  const rsan_frame *prim = rsan_frames_primary(&acc);

  rsan_buf t = {0};
  rsan_buf_puts(&t, "==================\n");
  rsan_buf_printf(&t, "WARNING: pyrsan: data race (pid=%d)\n", pid);
  rsan_buf_printf(&t, "  %s of size %d at 0x%llx by thread T%d:\n",
                  r->is_free ? "Free of a block" : access_noun(r->is_write, r->is_atomic, 1), r->size,
                  (unsigned long long)r->addr, r->tid);
  rsan_text_frames(&t, &acc);
  rsan_buf_printf(&t, "  Previous %s of size %d at 0x%llx by thread T%d:\n",
                  access_noun(r->prev_is_write, r->prev_is_atomic, 0), r->prev_size,
                  (unsigned long long)r->addr, r->prev_tid);
  rsan_text_frames(&t, &prev);
  rsan_text_location(&t, r->addr, kind, obj, &blk);
  text_thread(&t, r->tid);
  if (r->prev_tid != r->tid) text_thread(&t, r->prev_tid);
  /* what the check is (algorithm.md §5): hb = (po ∪ sw)+ of the observed run, sw through
   * reads-from only (psc adds nothing), whatever sc_accesses says for robustness */
  rsan_buf_puts(&t,
                "  Model: C11 happens-before of this run (release/acquire, fences, C++20 release sequences; "
                "seq_cst accesses as acquire/release, SC fences as acq_rel fences)\n");
  if (prim)
    rsan_buf_printf(&t, "SUMMARY: pyrsan: data race %s:%u in %s\n", prim->file ? prim->file : "??",
                    prim->line, prim->function ? prim->function : "??");
  else rsan_buf_printf(&t, "SUMMARY: pyrsan: data race at site 0x%016llx\n", (unsigned long long)r->site);
  rsan_buf_puts(&t, "==================\n");

  rsan_buf j = {0};
  rsan_buf_printf(&j, "{\"kind\": \"race\", \"type\": \"%s\", \"pid\": %d, \"model\": \"C11 happens-before\"",
                  type, pid);
  rsan_buf_printf(&j, ", \"location\": {\"address\": \"0x%llx\", \"object\": \"%s\"",
                  (unsigned long long)r->addr, obj_kind);
  if (strcmp(obj_kind, "unknown")) {
    rsan_buf_puts(&j, ", \"name\": ");
    rsan_buf_json_str(&j, obj);
  }
  if (!strcmp(obj_kind, "heap")) {
    rsan_frames af;
    rsan_frames_build(&af, 0, blk.stack, 4);
    rsan_buf_printf(&j,
                    ", \"block\": {\"address\": \"0x%llx\", \"size\": %llu, \"offset\": %llu, \"thread\": %d",
                    (unsigned long long)blk.addr, (unsigned long long)blk.size,
                    (unsigned long long)(r->addr - blk.addr), blk.tid);
    rsan_json_frame_fields(&j, &af);
    rsan_buf_puts(&j, "}");
  }
  rsan_buf_puts(&j, "}, \"access\": ");
  json_race_side(&j, r->site, r->tid, r->is_write, r->is_atomic, r->is_free, r->size, &acc);
  rsan_buf_puts(&j, ", \"previous\": ");
  json_race_side(&j, r->prev_site, r->prev_tid, r->prev_is_write, r->prev_is_atomic, 0, r->prev_size, &prev);
  rsan_buf_puts(&j, ", \"threads\": [");
  json_thread(&j, r->tid);
  if (r->prev_tid != r->tid) {
    rsan_buf_puts(&j, ", ");
    json_thread(&j, r->prev_tid);
  }
  rsan_buf_printf(&j, "], \"key\": \"0x%016llx/0x%016llx/race\", \"text\": ", (unsigned long long)a,
                  (unsigned long long)bsite);
  rsan_buf_json_str(&j, t.p);
  rsan_buf_puts(&j, "}\n");
  RSAN_EXPLAIN(rsan_explain_report(r->tid, a, bsite, "race"));

  rsan_publish_and_unlock(&t, &j, 1);
}

/* ---- race.c's reports: the previous access's call stack, the report of a hit ---- */
/* rsan_race.h (race.c and race_free.c, for the previous access of a report) */
void rsan_race_prev_stack(rsan_race_info *r) {
  rsan_thread *u = r->prev_site ? rsan_thread_by_tid(r->prev_tid) : NULL;
  if (!u) return;
  int k = rsan_race_site_find(u, r->prev_site);
  if (k < 0) return;
  for (uint32_t i = 0; i < RSAN_SITE_STACK_DEPTH; i++) {
    uint64_t s = __atomic_load_n(&u->site_stack[k].stack[i], __ATOMIC_RELAXED);
    if (!s) break;
    r->prev_stack[r->prev_nstack++] = s;
  }
}

/* rsan_race.h: the report of the access (size, wr, at, site; fa: its hook's frame) whose check
 * found h */
RSAN_NOINLINE void rsan_race_report_hit(rsan_thread *t, const rsan_race_hit *h, uint64_t size, int wr, int at,
                                        uint64_t site, uintptr_t fa) {
  rsan_race_info r;
  memset(&r, 0, sizeof r);
  r.addr = h->addr;
  r.site = site;
  r.tid = t->tid;
  r.is_write = wr;
  r.is_atomic = at;
  r.size = (int)size;
  r.nstack = rsan_thread_stack(t, fa, r.stack, RSAN_SHADOW_MAX);
  r.prev_site = h->site;
  r.prev_tid = rsan_thread_tid_at(w_tid(h->word), w_clock(h->word));
  rsan_race_prev_stack(&r);
  r.prev_is_write = (h->word & W_WRITE) != 0;
  r.prev_is_atomic = (h->word & W_ATOMIC) != 0;
  r.prev_size = __builtin_popcount(w_mask(h->word));
  rsan_report_race(&r);
}

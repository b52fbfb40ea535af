/* pyrsan runtime: what the report files share (report.c: outputs, deduplication, the exit
 * summary; report_robustness.c, report_race.c: the report kinds; suppressions.c; textbuf.c).
 * Internal; not an ABI. Every report is built, deduplicated and published under
 * rsan_report_lock, without any location lock held. */
#ifndef RSAN_REPORT_H
#define RSAN_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "rsan_internal.h"

/* ---- textbuf.c: a growable text buffer ---- */
typedef struct rsan_buf {
  char *p;
  size_t n, cap;
} rsan_buf;
void rsan_buf_need(rsan_buf *b, size_t k);
void rsan_buf_putn(rsan_buf *b, const char *s, size_t k);
void rsan_buf_puts(rsan_buf *b, const char *s);
void rsan_buf_printf(rsan_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rsan_buf_json_str(rsan_buf *b, const char *s); /* a JSON string literal */
void rsan_buf_free(rsan_buf *b);
void rsan_write_all(int fd, const char *p, size_t n);
int rsan_open_nocancel(const char *path, int flags); /* textbuf.c: open(2), mode 0644 */
void rsan_one_line(char *msg); /* textbuf.c: line breaks and control characters but the last newline -> ? */

/* ---- report.c: names, frames, outputs ---- */
const char *rsan_op_name(int op, int rmw_op);
const char *rsan_op_prep(int op); /* "store to x", "load from x", "fetch_add on x" */
#define MAX_FRAMES 256
typedef struct rsan_frames {
  const rsan_frame *f[MAX_FRAMES];
  uint32_t n;
} rsan_frames;
/* the frames of a site followed by those of its call stack (innermost first) */
void rsan_frames_build(rsan_frames *fr, uint64_t site, const uint64_t *stack, uint32_t nstack);
int rsan_system_file(const char *f); /* under RSAN_SYSTEM_PREFIXES */
/* docs/interfaces.md §2: innermost frame not in a system header, else the innermost one */
const rsan_frame *rsan_frames_primary(const rsan_frames *fr);
const char *rsan_basename(const char *f);
void rsan_text_frames(rsan_buf *b, const rsan_frames *fr);
void rsan_json_frame_fields(rsan_buf *b, const rsan_frames *fr); /* "file", ..., "stack" */
void rsan_object_name(char *out, size_t n, uintptr_t addr, int *known); /* "x", "x+8", "0x7f.." */
/* "5", or "-1 (0xffffffff)" for a value whose top bit (of size bytes) is set; out: 48 bytes */
const char *rsan_value_text(char *out, size_t n, uint64_t v, unsigned size);
/* "offset 4 of heap block allocated at f.c:10" (blk contains addr) */
void rsan_heap_name(char *out, size_t n, uintptr_t addr, const rsan_block_info *blk);
/* "size 12, allocated by thread T0; block at 0x.., location at 0x.." */
void rsan_heap_details(char *out, size_t n, uintptr_t addr, const rsan_block_info *blk);
/* "  Location is global 'x' at 0x..", ".. (size ..)" of a heap location (kind 2), or the address */
void rsan_text_location(rsan_buf *b, uintptr_t addr, int kind, const char *obj, const rsan_block_info *blk);
/* a global's name (*kind 1), a heap location's (*kind 2, blk filled), else the address (0) */
void rsan_location_name(char *out, size_t n, uintptr_t addr, int *kind, rsan_block_info *blk);
/* intercept_thread.c: the thread whose stack holds addr, or -1 (weak: absent from engine-only builds) */
int rsan_icpt_stack_owner(uintptr_t addr) __attribute__((weak));
void rsan_site_short_col(char *out, size_t n, uint64_t site, int with_col); /* "sb.c:13[:9]" */
void rsan_site_short(char *out, size_t n, uint64_t site);
/* 1 the first time (site, previous site, type) is seen; report_lock held */
int rsan_dedup_insert(uint64_t a, uint64_t b, uint64_t type);
/* changes whenever the dedup table is emptied (a reset, a forked child): written under
 * report_lock, read without it by the repeat caches (report_robustness.c) */
extern uint64_t rsan_report_epoch;
void rsan_json_schedule_fields(rsan_buf *j);
int rsan_text_fd(void); /* stderr, or <log_path>.<pid> */
/* The end of every report, with rsan_report_lock held: publishes the text block and the JSON
 * line, frees both, unlocks; may_halt: halt_on_error applies. */
void rsan_publish_and_unlock(rsan_buf *t, rsan_buf *j, int may_halt);
extern rsan_spin rsan_report_lock;
extern uint64_t rsan_nreports, rsan_nsuppressed; /* report_lock */
extern uint64_t rsan_nbenign; /* robustness reports with a benign consequence, not counted (report_lock) */
/* robustness reports listed inside the block of an earlier one: same access and type, another
 * stale write (report_lock) */
extern uint64_t rsan_ngrouped;
/* report_robustness.c: what a robustness report is (docs/reports.md §2) */
int rsan_op_is_cas(int op);
int rsan_op_is_read(int op);
int rsan_report_only_failure(const rsan_report_info *r); /* a CAS whose only stale outcome is failing */
const char *
rsan_report_consequence(const rsan_report_info *r); /* "value", "failed-cas", "write-only", "library" */
int rsan_report_benign(const rsan_report_info *r);                /* consequence other than "value" */
/* report_repair.c: the suggested repair, cheapest first */
enum { RSAN_FIX_NONE, RSAN_FIX_ACQUIRE, RSAN_FIX_ACQUIRE_FENCE, RSAN_FIX_FENCES, RSAN_FIX_ORDERS };
int rsan_repair_kind(const rsan_report_info *r);
void rsan_repair_text(rsan_buf *b, const rsan_report_info *r, const char *obj, int kind);
void rsan_repair_json(rsan_buf *b, const rsan_report_info *r, int kind);
/* report_robustness.c: the text blocks wait for the exit, one per group with every stale write
 * it met (report_lock held); a forked child forgets its parent's */
void rsan_robustness_flush_groups(void);
void rsan_robustness_forget_groups(void);
/* report.c: prints those blocks now, unless the report lock is held (a fatal error inside a
 * report); for the exits that bypass rsan_report_at_exit (deadlock, step bound, fatal) */
void rsan_report_flush_text(void);
extern uint64_t rsan_nraces;                      /* report_race.c */

/* ---- suppressions.c ----
 * Lines `robustness:PATTERN` or `race:PATTERN` (see suppressions.c) */
enum { RSAN_SUPP_ROBUSTNESS = 1, RSAN_SUPP_RACE = 2 };
typedef struct rsan_supp {
  int kind;
  char *pattern; /* without the kind prefix, as written */
  uint64_t hits;
} rsan_supp;
extern rsan_supp *rsan_supps;
extern uint64_t rsan_nsupps;
int rsan_suppressions_load(const char *path, char *err, size_t errn);
/* the suppression matching one of the stacks (NULL entries skipped), or NULL */
rsan_supp *rsan_supp_find(int kind, const rsan_frames *const *stacks, int nstacks);
/* one JSON line per suppressed (distinct) report, so that the driver can count them */
void rsan_json_suppressed(const char *kind, const char *type, const rsan_supp *sp, uint64_t site,
                          uint64_t prev_site);

#endif /* RSAN_REPORT_H */

/* The explain log (rsan_explain.h; line formats in docs/interfaces.md "Explain log"). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rsan_explain.h"
#include "rsan_report.h"
#include "rsan_sched_closure.h"

int rsan_explain_on;

/* A bound on the log of one process: past it, one "truncated" line and nothing more (an
 * explanation needs the events up to its report; a long run keeps its first ones). */
#define MAX_EVENTS (1ull << 20)
#define BUF_SIZE 65536
#define SEEN_SLOTS 65536 /* sites and locations described so far (open addressing) */
#define PLAIN_SLOTS 8

static rsan_spin lock;
static int fd = -1;
static char buf[BUF_SIZE];
static size_t used;
static uint64_t next_event;
static uint64_t seen[SEEN_SLOTS]; /* site ids and addresses | 1 (never 0) */
static size_t nseen;

/* plain accesses already logged by this thread since its last other event */
static __thread struct {
  uint64_t epoch;                    /* bumped by each non-plain event of the thread */
  uint64_t site[PLAIN_SLOTS], when[PLAIN_SLOTS];
  unsigned next;
} plain;

static void flush_locked(void) {
  if (fd >= 0 && used) rsan_write_all(fd, buf, used);
  used = 0;
}

static void put(const char *s, size_t n) {
  if (used + n > BUF_SIZE) flush_locked();
  if (n > BUF_SIZE) {
    if (fd >= 0) rsan_write_all(fd, s, n);
    return;
  }
  memcpy(buf + used, s, n);
  used += n;
}

/* 1 the first time key is seen (a full table answers 1: the description is repeated) */
static int first_time(uint64_t key) {
  if (nseen >= SEEN_SLOTS / 2) return 1;
  size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 48) & (SEEN_SLOTS - 1);
  while (seen[i]) {
    if (seen[i] == key) return 0;
    i = (i + 1) & (SEEN_SLOTS - 1);
  }
  seen[i] = key;
  nseen++;
  return 1;
}

static void describe_site(uint64_t site) {
  if (!site || !first_time((site << 1) | 1)) return;
  rsan_frames fr;
  rsan_frames_build(&fr, site, NULL, 0);
  const rsan_frame *p = rsan_frames_primary(&fr);
  if (!p) return;
  rsan_buf b = {0};
  rsan_buf_printf(&b, "{\"site\": \"0x%016llx\", \"file\": ", (unsigned long long)site);
  rsan_buf_json_str(&b, p->file ? p->file : "");
  rsan_buf_printf(&b, ", \"line\": %u, \"column\": %u, \"function\": ", p->line, p->column);
  rsan_buf_json_str(&b, p->function ? p->function : "");
  rsan_buf_puts(&b, "}\n");
  put(b.p, b.n);
  rsan_buf_free(&b);
}

static void describe_loc(uintptr_t addr, const rsan_loc *l) {
  if (!addr || !first_time(((uint64_t)addr << 1) & ~1ull)) return;
  char name[300];
  int known;
  rsan_block_info blk;
  rsan_location_name(name, sizeof name, addr, &known, &blk);
  rsan_buf b = {0};
  rsan_buf_printf(&b, "{\"loc\": \"0x%llx\"", (unsigned long long)addr);
  if (known) {
    rsan_buf_puts(&b, ", \"name\": ");
    rsan_buf_json_str(&b, name);
  }
  if (l && l->init_known) rsan_buf_printf(&b, ", \"init\": %llu", (unsigned long long)l->init_value);
  rsan_buf_puts(&b, "}\n");
  put(b.p, b.n);
  rsan_buf_free(&b);
}

/* Starts an event line under lock: 0 when the log is closed or full. */
static int begin(const rsan_thread *t) {
  if (fd < 0) return 0;
  if (next_event == MAX_EVENTS) {
    char line[64];
    int k = snprintf(line, sizeof line, "{\"truncated\": %llu}\n", (unsigned long long)next_event);
    put(line, (size_t)k);
    next_event++;
    flush_locked();
  }
  if (next_event > MAX_EVENTS) return 0;
  (void)t;
  return 1;
}

static void event_head(rsan_buf *b, const rsan_thread *t, const char *op) {
  rsan_buf_printf(b, "{\"e\": %llu, \"tid\": %d, \"op\": \"%s\"", (unsigned long long)next_event++,
                  t ? t->tid : -1, op);
}

static void end_line(rsan_buf *b) {
  rsan_buf_puts(b, "}\n");
  put(b->p, b->n);
  rsan_buf_free(b);
}

static const char *op_word(int op, int rmw_op) {
  switch (op) {
  case RSAN_OP_LOAD: return "load";
  case RSAN_OP_STORE: return "store";
  case RSAN_OP_RMW: return rsan_op_name(op, rmw_op);
  case RSAN_OP_CAS_WEAK:
  case RSAN_OP_CAS_STRONG: return "cas";
  case RSAN_OP_WAIT: return "wait";
  case RSAN_OP_BCAS: return "bcas";
  default: return "sync";
  }
}

void rsan_explain_access(const rsan_thread *t, const rsan_loc *l, int op, int rmw_op, int order, int size,
                         int has_read, uint64_t read, int has_write, uint64_t written, uint64_t site) {
  if (rsan_closure_logging) {
    rsan_closure_note_access(t, l, op, rmw_op, order, size, has_read, read, has_write, written, site);
    if (fd < 0) return;
  }
  plain.epoch++;
  rsan_spin_lock(&lock);
  if (begin(t)) {
    describe_site(site);
    describe_loc(l->addr, l);
    rsan_buf b = {0};
    event_head(&b, t, op_word(op, rmw_op));
    rsan_buf_printf(&b, ", \"atomic\": true, \"order\": \"%s\", \"addr\": \"0x%llx\", \"size\": %d",
                    rsan_order_name(order), (unsigned long long)l->addr, size);
    if (has_read) rsan_buf_printf(&b, ", \"read\": %llu", (unsigned long long)read);
    if (has_write) rsan_buf_printf(&b, ", \"written\": %llu", (unsigned long long)written);
    rsan_buf_printf(&b, ", \"site\": \"0x%016llx\"", (unsigned long long)site);
    end_line(&b);
  }
  rsan_spin_unlock(&lock);
}

void rsan_explain_fence(const rsan_thread *t, int order, uint64_t site) {
  if (rsan_closure_logging) {
    rsan_closure_note_fence(t, order, site);
    if (fd < 0) return;
  }
  plain.epoch++;
  rsan_spin_lock(&lock);
  if (begin(t)) {
    describe_site(site);
    rsan_buf b = {0};
    event_head(&b, t, "fence");
    rsan_buf_printf(&b, ", \"order\": \"%s\", \"site\": \"0x%016llx\"", rsan_order_name(order),
                    (unsigned long long)site);
    end_line(&b);
  }
  rsan_spin_unlock(&lock);
}

void rsan_explain_sync(const rsan_thread *t, const char *kind, uintptr_t addr) {
  if (rsan_closure_logging) {
    rsan_closure_note_sync(t, kind, addr);
    if (fd < 0) return;
  }
  plain.epoch++;
  rsan_spin_lock(&lock);
  if (begin(t)) {
    describe_loc(addr, NULL);
    rsan_buf b = {0};
    event_head(&b, t, kind);
    rsan_buf_printf(&b, ", \"addr\": \"0x%llx\"", (unsigned long long)addr);
    end_line(&b);
  }
  rsan_spin_unlock(&lock);
}

void rsan_explain_thread(const rsan_thread *t, const char *kind, const rsan_thread *other) {
  if (rsan_closure_logging) {
    rsan_closure_note_thread(t, kind, other);
    if (fd < 0) return;
  }
  plain.epoch++;
  rsan_spin_lock(&lock);
  if (begin(t)) {
    rsan_buf b = {0};
    event_head(&b, t, kind);
    rsan_buf_printf(&b, ", \"other\": %d", other ? other->tid : -1);
    end_line(&b);
  }
  rsan_spin_unlock(&lock);
}

void rsan_explain_plain(const rsan_thread *t, uintptr_t addr, uint64_t size, int is_write, uint64_t site) {
  if (fd < 0) return; /* on for the closure's hooks only */
  uint64_t key = (site << 1) | (uint64_t)(is_write != 0);
  for (unsigned i = 0; i < PLAIN_SLOTS; i++)
    if (plain.site[i] == key && plain.when[i] == plain.epoch) return;
  unsigned slot = plain.next++ % PLAIN_SLOTS;
  plain.site[slot] = key;
  plain.when[slot] = plain.epoch;
  rsan_spin_lock(&lock);
  if (begin(t)) {
    describe_site(site);
    describe_loc(addr, NULL);
    rsan_buf b = {0};
    event_head(&b, t, is_write ? "write" : "read");
    rsan_buf_printf(&b, ", \"atomic\": false, \"addr\": \"0x%llx\", \"size\": %llu, \"site\": \"0x%016llx\"",
                    (unsigned long long)addr, (unsigned long long)size, (unsigned long long)site);
    end_line(&b);
  }
  rsan_spin_unlock(&lock);
}

/* free() / delete of a block: a plain write of the whole block, as race_free.c checks it, at
 * the call site on top of the thread's shadow stack (free itself is not instrumented): the
 * access a free-versus-access race report names */
void rsan_explain_free(const void *p, size_t n) {
  rsan_thread *t = rsan_thread_peek_current();
  if (fd < 0 || !t || !n) return;
  uint64_t st[RSAN_SHADOW_MAX];
  uint32_t k = rsan_thread_stack(t, (uintptr_t)__builtin_frame_address(0), st, RSAN_SHADOW_MAX);
  rsan_explain_plain(t, (uintptr_t)p, n, 1, k ? st[0] : 0);
}

void rsan_explain_report(int tid, uint64_t a, uint64_t b_, const char *type) {
  rsan_spin_lock(&lock);
  if (fd >= 0) {
    char line[160];
    int k = snprintf(
        line, sizeof line, "{\"e\": %llu, \"tid\": %d, \"report\": \"0x%016llx/0x%016llx/%s\"}\n",
        (unsigned long long)next_event++, tid, (unsigned long long)a, (unsigned long long)b_, type);
    put(line, (size_t)k);
    flush_locked(); /* the events that explain it are on disk even if the program crashes */
  }
  rsan_spin_unlock(&lock);
}

static void open_log(void) {
  char path[600];
  rsan_expand_pid(rsan_flag.explain_path, path, sizeof path);
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    rsan_explain_on = 0;
    static const char msg[] = "pyrsan: cannot open explain_path for writing; no explain log\n";
    rsan_write_all(2, msg, sizeof msg - 1);
    return;
  }
  char line[96];
  int k = snprintf(line, sizeof line, "{\"pyrsan_events\": 1, \"pid\": %d}\n", (int)getpid());
  put(line, (size_t)k);
}

static void at_exit(void) {
  rsan_spin_lock(&lock);
  flush_locked();
  rsan_spin_unlock(&lock);
}

/* A forked child writes its own log (explain_path with %p), never the parent's buffer. */
static void after_fork_child(void) {
  used = 0;
  next_event = 0;
  nseen = 0;
  memset(seen, 0, sizeof seen);
  lock.v = 0;
  if (fd >= 0) close(fd);
  fd = -1;
  open_log();
}

void rsan_explain_init(void) {
  if (!rsan_flag.explain_path[0]) return;
  open_log();
  if (fd < 0) return;
  atexit(at_exit);
  pthread_atfork(NULL, NULL, after_fork_child);
  rsan_explain_on = 1;
  /* the plain-access hot path (race.c) tests this one word for "races on" and "log on" */
  if (rsan_flag.report_races) rsan_flag.report_races = 2;
}

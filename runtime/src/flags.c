/* Runtime options from PYRSAN_OPTIONS (docs/interfaces.md §2): one table, rsan_flags.inc
 * (group, type, name, default, help), gives the option structs (rsan_internal.h), the
 * defaults, the parser and help=1 (and the README's table is checked against it by
 * testsuite/ci). Values are `name=value` separated by ':' or white space; a value is bare (up
 * to the next separator) or quoted ("...", with \x for x), the rule of pyrsan/options.py,
 * which the driver uses to write paths with spaces or ':'. A bad option or suppressions file
 * ends the process at start-up with one line on stderr and exit status
 * RSAN_EXIT_BAD_OPTIONS, so that it cannot be mistaken for the program's own exit status. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rsan_exit.h"
#include "rsan_report.h"
#include "rsan_sched.h"

rsan_flags rsan_flag;
rsan_sched_flags rsan_sched_flag;

enum flag_type { F_BOOL, F_INT, F_STRING, F_SC_MODE, F_SCHED, F_U64, F_EXIT };

typedef struct flag_desc {
  const char *name;
  int type;
  const char *def;
  const char *help;
  void *field;
} flag_desc;

#define RSAN_FLAG_STORE_ENGINE rsan_flag
#define RSAN_FLAG_STORE_SCHED rsan_sched_flag
static const flag_desc flag_table[] = {
#define RSAN_FLAG(group, type, name, def, help) {#name, type, def, help, &RSAN_FLAG_STORE_##group.name},
#include "rsan_flags.inc"
#undef RSAN_FLAG
};
#define NFLAGS (sizeof flag_table / sizeof flag_table[0])

static void err_line(char *err, size_t errn, const char *what, const char *name, size_t namelen,
                     const char *tail) {
  if (namelen > 100) namelen = 100;
  snprintf(err, errn, "pyrsan: %s '%.*s' in PYRSAN_OPTIONS%s\n", what, (int)namelen, name, tail);
}

/* 0, or -1 for a bad value */
static int set_flag(const flag_desc *f, const char *v, size_t vn) {
  char *base = (char *)f->field;
  switch (f->type) {
  case F_BOOL:
    if (vn == 1 && (v[0] == '0' || v[0] == '1')) {
      *(int *)base = v[0] - '0';
      return 0;
    }
    if (vn == 4 && !strncmp(v, "true", 4)) {
      *(int *)base = 1;
      return 0;
    }
    if (vn == 5 && !strncmp(v, "false", 5)) {
      *(int *)base = 0;
      return 0;
    }
    return -1;
  case F_INT: {
    if (vn == 0 || vn > 9) return -1;
    int neg = 0, x = 0;
    size_t i = 0;
    if (v[0] == '-') {
      neg = 1;
      i = 1;
      if (vn == 1) return -1;
    }
    for (; i < vn; i++) {
      if (v[i] < '0' || v[i] > '9') return -1;
      x = x * 10 + (v[i] - '0');
    }
    *(int *)base = neg ? -x : x;
    return 0;
  }
  case F_EXIT: { /* an exit status: 0..255 (256 would exit 0 after reports) */
    int x = 0;
    if (vn == 0 || vn > 3) return -1;
    for (size_t i = 0; i < vn; i++) {
      if (v[i] < '0' || v[i] > '9') return -1;
      x = x * 10 + (v[i] - '0');
    }
    if (x > 255) return -1;
    *(int *)base = x;
    return 0;
  }
  case F_STRING:
    if (vn >= RSAN_FLAG_STRING_MAX) return -1;
    memcpy(base, v, vn);
    base[vn] = 0;
    return 0;
  case F_SC_MODE:
    if (vn == 6 && !strncmp(v, "fenced", 6)) {
      *(int *)base = RSAN_SC_FENCED;
      return 0;
    }
    if (vn == 2 && !strncmp(v, "ra", 2)) {
      *(int *)base = RSAN_SC_RA;
      return 0;
    }
    return -1;
  case F_SCHED:
    if (vn == 2 && !strncmp(v, "os", 2)) {
      *(int *)base = RSAN_SCHED_OS;
      return 0;
    }
    if (vn == 6 && !strncmp(v, "random", 6)) {
      *(int *)base = RSAN_SCHED_RANDOM;
      return 0;
    }
    if (vn == 3 && !strncmp(v, "pct", 3)) {
      *(int *)base = RSAN_SCHED_PCT;
      return 0;
    }
    if (vn == 3 && !strncmp(v, "dfs", 3)) {
      *(int *)base = RSAN_SCHED_DFS;
      return 0;
    }
    if (vn == 4 && !strncmp(v, "auto", 4)) {
      *(int *)base = RSAN_SCHED_AUTO;
      return 0;
    }
    return -1;
  case F_U64: {
    if (vn == 0 || vn > 20) return -1;
    unsigned long long x = 0;
    for (size_t i = 0; i < vn; i++) {
      if (v[i] < '0' || v[i] > '9') return -1;
      unsigned d = (unsigned)(v[i] - '0');
      if (x > (ULLONG_MAX - d) / 10) return -1;
      x = x * 10 + d;
    }
    *(unsigned long long *)base = x;
    return 0;
  }
  }
  return -1;
}

void rsan_flags_defaults(void) {
  memset(&rsan_flag, 0, sizeof rsan_flag);
  memset(&rsan_sched_flag, 0, sizeof rsan_sched_flag);
  for (size_t i = 0; i < NFLAGS; i++) set_flag(&flag_table[i], flag_table[i].def, strlen(flag_table[i].def));
}

static int is_sep(char c) { return c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int parse_options(const char *s, char *err, size_t errn);

/* Outside test mode a bad option (or suppressions file) is fatal here, with its own exit
 * status (docs/interfaces.md §2); test mode gets -1 and the message in err. */
int rsan_flags_parse(const char *s, char *err, size_t errn) {
  int rc = parse_options(s, err, errn);
  if (rc == 0 && rsan_flag.suppressions[0] && !rsan_test_mode)
    rc = rsan_suppressions_load(rsan_flag.suppressions, err, errn);
  if (rc != 0 && !rsan_test_mode) {
    rsan_one_line(err);
    (void)!write(2, err, strlen(err));
    rsan_exit_raw(RSAN_EXIT_BAD_OPTIONS);
  }
  return rc;
}

static int parse_options(const char *s, char *err, size_t errn) {
  const char *p = s;
  for (;;) {
    while (*p && is_sep(*p)) p++;
    if (!*p) return 0;
    const char *name = p;
    while (*p && *p != '=' && !is_sep(*p)) p++;
    size_t nn = (size_t)(p - name);
    const flag_desc *f = NULL;
    for (size_t i = 0; i < NFLAGS; i++)
      if (strlen(flag_table[i].name) == nn && !strncmp(flag_table[i].name, name, nn)) f = &flag_table[i];
    if (!f) {
      err_line(err, errn, "unknown option", name, nn, "");
      return -1;
    }
    if (*p != '=') {
      err_line(err, errn, "option", name, nn, " needs a value (name=value)");
      return -1;
    }
    const char *v = ++p;
    char quoted[RSAN_FLAG_STRING_MAX + 1];
    size_t vn;
    if (*p == '"') { /* a quoted value (pyrsan/options.py): \x stands for x */
      size_t k = 0;
      int overflow = 0;
      for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1]) p++;
        if (k < RSAN_FLAG_STRING_MAX) quoted[k++] = *p;
        else overflow = 1;
      }
      if (!*p) {
        err_line(err, errn, "option", name, nn, " has an unterminated quoted value");
        return -1;
      }
      p++;
      if (*p && !is_sep(*p)) {
        err_line(err, errn, "option", name, nn, " has text right after its quoted value");
        return -1;
      }
      if (overflow) {
        err_line(err, errn, "option", name, nn, " has a value that is too long");
        return -1;
      }
      quoted[k] = 0;
      v = quoted;
      vn = k;
    } else {
      while (*p && !is_sep(*p)) p++;
      vn = (size_t)(p - v);
    }
    int rc = set_flag(f, v, vn);
    if (rc != 0) {
      char tail[200];
      snprintf(tail, sizeof tail, " has a bad value '%.*s'", (int)(vn > 100 ? 100 : vn), v);
      err_line(err, errn, "option", name, nn, tail);
      return -1;
    }
  }
}

/* One line per option, its help text written whole: the driver and the tests read these lines
 * back as the option table, so no text may be cut to a buffer's size. */
void rsan_flags_print_help(void) {
  char buf[200];
  for (size_t i = 0; i < NFLAGS; i++) {
    int n = snprintf(buf, sizeof buf, "pyrsan option %s (default '%s'): ", flag_table[i].name,
                     flag_table[i].def);
    if (n <= 0) continue;
    (void)!write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    (void)!write(2, flag_table[i].help, strlen(flag_table[i].help));
    (void)!write(2, "\n", 1);
  }
}

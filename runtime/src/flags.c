/* Runtime options from PYRSAN_OPTIONS (docs/interfaces.md §2): one table (name, type,
 * default, help) drives the defaults, the parser and help=1. Values are `name=value`
 * separated by ':' or white space. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rsan_internal.h"

rsan_flags rsan_flag;

enum flag_type { F_BOOL, F_INT, F_STRING, F_SC_MODE };

typedef struct flag_desc {
  const char *name;
  int type;
  const char *def;
  const char *help;
  size_t offset;
} flag_desc;

#define FLAG(name, type, def, help) {#name, type, def, help, offsetof(rsan_flags, name)}
static const flag_desc flag_table[] = {
    FLAG(json_path, F_STRING, "", "append one JSON object per report to this file; %p expands to the pid"),
    FLAG(print_reports, F_BOOL, "1", "print text report blocks on stderr"),
    FLAG(halt_on_error, F_BOOL, "0", "exit right after the first report"),
    FLAG(exitcode, F_INT, "66", "exit status at exit when reports were made"),
    FLAG(report_robustness, F_BOOL, "1", "robustness reports on/off"),
    FLAG(report_races, F_BOOL, "1", "data-race reports on/off"),
    FLAG(sc_accesses, F_SC_MODE, "fenced",
         "fenced: a seq_cst access is F_sc; access; F_sc. ra: seq_cst treated as acq/rel (RSAN)"),
    FLAG(verbosity, F_INT, "0", "1: start/exit lines and counters on stderr"),
    FLAG(help, F_BOOL, "0", "print the options and their defaults on stderr"),
};
#define NFLAGS (sizeof flag_table / sizeof flag_table[0])

static void err_line(char *err, size_t errn, const char *what, const char *name, size_t namelen,
                     const char *tail) {
  if (namelen > 100) namelen = 100;
  snprintf(err, errn, "pyrsan: %s '%.*s' in PYRSAN_OPTIONS%s\n", what, (int)namelen, name, tail);
}

static int set_flag(const flag_desc *f, const char *v, size_t vn) {
  char *base = (char *)&rsan_flag + f->offset;
  switch (f->type) {
  case F_BOOL:
    if (vn == 1 && (v[0] == '0' || v[0] == '1')) {
      *(int *)base = v[0] - '0';
      return 0;
    }
    if (vn == 4 && !strncmp(v, "true", 4)) { *(int *)base = 1; return 0; }
    if (vn == 5 && !strncmp(v, "false", 5)) { *(int *)base = 0; return 0; }
    return -1;
  case F_INT: {
    if (vn == 0 || vn > 9) return -1;
    int neg = 0, x = 0;
    size_t i = 0;
    if (v[0] == '-') { neg = 1; i = 1; if (vn == 1) return -1; }
    for (; i < vn; i++) {
      if (v[i] < '0' || v[i] > '9') return -1;
      x = x * 10 + (v[i] - '0');
    }
    *(int *)base = neg ? -x : x;
    return 0;
  }
  case F_STRING:
    if (vn >= sizeof rsan_flag.json_path) return -1;
    memcpy(base, v, vn);
    base[vn] = 0;
    return 0;
  case F_SC_MODE:
    if (vn == 6 && !strncmp(v, "fenced", 6)) { *(int *)base = RSAN_SC_FENCED; return 0; }
    if (vn == 2 && !strncmp(v, "ra", 2)) { *(int *)base = RSAN_SC_RA; return 0; }
    return -1;
  }
  return -1;
}

void rsan_flags_defaults(void) {
  memset(&rsan_flag, 0, sizeof rsan_flag);
  for (size_t i = 0; i < NFLAGS; i++) set_flag(&flag_table[i], flag_table[i].def, strlen(flag_table[i].def));
}

static int is_sep(char c) { return c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int rsan_flags_parse(const char *s, char *err, size_t errn) {
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
    while (*p && !is_sep(*p)) p++;
    if (set_flag(f, v, (size_t)(p - v)) != 0) {
      char tail[200];
      snprintf(tail, sizeof tail, " has a bad value '%.*s'", (int)((p - v) > 100 ? 100 : (p - v)), v);
      err_line(err, errn, "option", name, nn, tail);
      return -1;
    }
  }
}

void rsan_flags_print_help(void) {
  char buf[400];
  for (size_t i = 0; i < NFLAGS; i++) {
    int n = snprintf(buf, sizeof buf, "pyrsan option %s (default '%s'): %s\n", flag_table[i].name,
                     flag_table[i].def, flag_table[i].help);
    if (n > 0) (void)!write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
  }
}

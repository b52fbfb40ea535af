/* Suppressions, ThreadSanitizer style (option suppressions=): the file's rules and the
 * matching of a report's stacks against them. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rsan_report.h"

rsan_supp *rsan_supps;
uint64_t rsan_nsupps;

static int glob_match(const char *p, const char *pe, const char *s, const char *se) {
  const char *star_p = NULL, *star_s = NULL;
  while (s < se) {
    if (p < pe && *p == '*') {
      star_p = ++p;
      star_s = s;
    } else if (p < pe && *p == *s) {
      p++;
      s++;
    } else if (star_p) {
      p = star_p;
      s = ++star_s;
    } else {
      return 0;
    }
  }
  while (p < pe && *p == '*') p++;
  return p == pe;
}

/* TSan's TemplateMatch: '^' and '$' anchor, otherwise `*` is implied at that end. */
static int supp_match_one(const char *pat, const char *str) {
  if (!str || !str[0]) return 0;
  size_t n = strlen(pat);
  int start = n && pat[0] == '^';
  int end = n > (size_t)start && pat[n - 1] == '$';
  char full[600];
  int k = snprintf(full, sizeof full, "%s%.*s%s", start ? "" : "*", (int)(n - (size_t)start - (size_t)end),
                   pat + start, end ? "" : "*");
  if (k < 0 || (size_t)k >= sizeof full) return 0;
  return glob_match(full, full + k, str, str + strlen(str));
}

static int supp_match_frames(const char *pat, const rsan_frames *fr) {
  char fl[600];
  for (uint32_t i = 0; i < fr->n; i++) {
    const rsan_frame *f = fr->f[i];
    if (supp_match_one(pat, f->function) || supp_match_one(pat, f->file)) return 1;
    snprintf(fl, sizeof fl, "%s:%u", f->file ? f->file : "", f->line);
    if (f->file && supp_match_one(pat, fl)) return 1;
  }
  return 0;
}

/* The suppression that matches one of the report's stacks, or NULL. */
rsan_supp *rsan_supp_find(int kind, const rsan_frames *const *stacks, int nstacks) {
  for (uint64_t i = 0; i < rsan_nsupps; i++) {
    if (rsan_supps[i].kind != kind) continue;
    for (int k = 0; k < nstacks; k++)
      if (stacks[k] && supp_match_frames(rsan_supps[i].pattern, stacks[k])) return &rsan_supps[i];
  }
  return NULL;
}

static void trim(char **b, char **e) {
  while (*b < *e && (**b == ' ' || **b == '\t' || **b == '\r')) (*b)++;
  while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r')) (*e)--;
}

int rsan_suppressions_load(const char *path, char *err, size_t errn) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, errn, "pyrsan: cannot read the suppressions file '%s'\n", path);
    return -1;
  }
  rsan_buf b = {0};
  char chunk[4096];
  ssize_t k;
  while ((k = read(fd, chunk, sizeof chunk)) > 0) rsan_buf_putn(&b, chunk, (size_t)k);
  close(fd);
  if (!b.p) rsan_buf_putn(&b, "", 0);
  uint64_t cap = 0, lineno = 0;
  for (char *line = b.p; line && *line;) {
    char *nl = strchr(line, '\n');
    char *e = nl ? nl : line + strlen(line);
    char *next = nl ? nl + 1 : NULL;
    lineno++;
    char *s = line;
    trim(&s, &e);
    if (s < e && *s != '#') {
      int kind = 0;
      size_t plen = 0;
      if ((size_t)(e - s) > 11 && !strncmp(s, "robustness:", 11)) kind = RSAN_SUPP_ROBUSTNESS, plen = 11;
      else if ((size_t)(e - s) > 5 && !strncmp(s, "race:", 5)) kind = RSAN_SUPP_RACE, plen = 5;
      char *pb = s + plen, *pe = e;
      trim(&pb, &pe);
      if (!kind || pb == pe) {
        snprintf(err, errn,
                 "pyrsan: suppressions file '%s' line %llu: expected 'robustness:PATTERN' or "
                 "'race:PATTERN', got '%.*s'\n",
                 path, (unsigned long long)lineno, (int)((e - s) > 80 ? 80 : (e - s)), s);
        rsan_buf_free(&b);
        return -1;
      }
      if (rsan_nsupps == cap) {
        cap = cap ? cap * 2 : 16;
        rsan_supps = rsan_realloc(rsan_supps, cap * sizeof(rsan_supp));
      }
      char *pat = rsan_alloc((size_t)(pe - pb) + 1);
      memcpy(pat, pb, (size_t)(pe - pb));
      rsan_supps[rsan_nsupps].kind = kind;
      rsan_supps[rsan_nsupps].pattern = pat;
      rsan_supps[rsan_nsupps].hits = 0;
      rsan_nsupps++;
    }
    line = next;
  }
  rsan_buf_free(&b);
  return 0;
}

/* The runtime's own memory (never the interposed malloc/free: architecture.md "Linking and
 * interception") and its fatal-error exits. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rsan_exit.h"
#include "rsan_internal.h"

extern void *__libc_calloc(size_t, size_t);
extern void *__libc_malloc(size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static void rsan_oom(void) {
  static const char msg[] = "pyrsan: out of memory in the runtime\n";
  (void)!write(2, msg, sizeof msg - 1);
  rsan_exit_raw(RSAN_EXIT_FATAL);
}

void *rsan_alloc(size_t n) {
  void *p = __libc_calloc(1, n ? n : 1);
  if (!p) rsan_oom();
  return p;
}

void *rsan_alloc_line(size_t n) {
  void *p = __libc_memalign(64, n ? n : 1);
  if (!p) rsan_oom();
  memset(p, 0, n);
  return p;
}

void *rsan_alloc_raw(size_t n) {
  void *p = __libc_malloc(n ? n : 1);
  if (!p) rsan_oom();
  return p;
}

void *rsan_realloc(void *p, size_t n) {
  void *q = __libc_realloc(p, n ? n : 1);
  if (!q) rsan_oom();
  return q;
}

void rsan_free(void *p) { __libc_free(p); }

void rsan_die_assert(const char *cond, const char *file, int line) {
  char buf[512];
  int n = 0;
  const char *parts[] = {"pyrsan: internal assertion failed: ", cond, " at ", file, ":"};
  for (unsigned i = 0; i < sizeof parts / sizeof parts[0]; i++)
    for (const char *s = parts[i]; *s && n < 480; s++) buf[n++] = *s;
  char num[16];
  int k = 0;
  do num[k++] = (char)('0' + line % 10);
  while ((line /= 10) && k < 15);
  while (k) buf[n++] = num[--k];
  buf[n++] = '\n';
  (void)!write(2, buf, (size_t)n);
  abort();
}

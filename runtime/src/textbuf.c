/* A growable text buffer (the runtime's own memory) and write(2) of all of it. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rsan_report.h"

void rsan_buf_need(rsan_buf *b, size_t k) {
  if (b->n + k + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 1024;
  while (cap < b->n + k + 1) cap *= 2;
  b->p = rsan_realloc(b->p, cap);
  b->cap = cap;
}
void rsan_buf_putn(rsan_buf *b, const char *s, size_t k) {
  rsan_buf_need(b, k);
  memcpy(b->p + b->n, s, k);
  b->n += k;
  b->p[b->n] = 0;
}
void rsan_buf_puts(rsan_buf *b, const char *s) { rsan_buf_putn(b, s, strlen(s)); }
void rsan_buf_printf(rsan_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[512];
  int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  if ((size_t)k < sizeof tmp) {
    rsan_buf_putn(b, tmp, (size_t)k);
    return;
  }
  rsan_buf_need(b, (size_t)k);
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)k;
}
void rsan_buf_json_str(rsan_buf *b, const char *s) {
  rsan_buf_puts(b, "\"");
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"') rsan_buf_puts(b, "\\\"");
    else if (c == '\\') rsan_buf_puts(b, "\\\\");
    else if (c == '\n') rsan_buf_puts(b, "\\n");
    else if (c == '\t') rsan_buf_puts(b, "\\t");
    else if (c == '\r') rsan_buf_puts(b, "\\r");
    else if (c < 0x20) rsan_buf_printf(b, "\\u%04x", c);
    else rsan_buf_putn(b, (const char *)&c, 1);
  }
  rsan_buf_puts(b, "\"");
}
void rsan_buf_free(rsan_buf *b) {
  rsan_free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
}

/* All of it, or up to a real error: a signal interrupting write (EINTR, a handler installed
 * without SA_RESTART) does not drop the rest. write(2) is a cancellation point, and reports
 * are written under the report lock: cancellation is off meanwhile, so a deferred
 * pthread_cancel never ends a thread holding the lock. */
void rsan_write_all(int fd, const char *p, size_t n) {
  int cancel_state;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  while (n) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k <= 0) break;
    p += k;
    n -= (size_t)k;
  }
  pthread_setcancelstate(cancel_state, NULL);
}

/* open(2) for the report files, made under the report lock: not a cancellation point here
 * (see rsan_write_all). */
int rsan_open_nocancel(const char *path, int flags) {
  int cancel_state;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  int fd = open(path, flags, 0644);
  pthread_setcancelstate(cancel_state, NULL);
  return fd;
}

/* A message of one line: control characters (a newline or CR from a file or an option
 * value it quotes) become '?', except the final newline. */
void rsan_one_line(char *msg) {
  size_t n = strlen(msg);
  unsigned char *s = (unsigned char *)msg;
  for (size_t i = 0; i < n; i++) {
    if ((s[i] < 0x20 || s[i] == 0x7f) && !(s[i] == '\n' && i == n - 1)) s[i] = '?';
    /* the UTF-8 line breaks of Unicode (NEL U+0085, LS U+2028, PS U+2029) */
    if (s[i] == 0xc2 && i + 1 < n && s[i + 1] == 0x85) s[i] = s[i + 1] = '?';
    if (s[i] == 0xe2 && i + 2 < n && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9))
      s[i] = s[i + 1] = s[i + 2] = '?';
  }
}

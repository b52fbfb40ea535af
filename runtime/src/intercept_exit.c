/* _exit, _Exit and quick_exit end the process without atexit handlers, so without the
 * runtime's exit summary and exit status (rsan_report_at_exit: the trace's end line, the
 * "reported N" line, exit status `exitcode` when reports were made). The interceptors run it
 * first (once: it may itself end with _exit); quick_exit gets it from an at_quick_exit
 * handler registered before main, so it runs after the program's own handlers. */
#include <stdlib.h>
#include <unistd.h>

#include "intercept_internal.h"
#include "rsan_internal.h"

RSAN_REAL_DECL(void, _exit, NULL, int)
RSAN_REAL_DECL(void, _Exit, NULL, int)

/* rsan_report_at_exit runs once per process: when it ends with _exit(exitcode) itself, this
 * second call returns at once. */
static void summary_once(void) {
  if (__atomic_load_n(&rsan_inited, __ATOMIC_ACQUIRE)) rsan_report_at_exit();
}

void _exit(int status) {
  summary_once();
  REAL(_exit)(status);
  __builtin_unreachable();
}

void _Exit(int status) {
  summary_once();
  REAL(_Exit)(status);
  __builtin_unreachable();
}

static void at_quick_exit_summary(void) { summary_once(); }

__attribute__((constructor)) static void rsan_register_quick_exit(void) {
  at_quick_exit(at_quick_exit_summary);
}

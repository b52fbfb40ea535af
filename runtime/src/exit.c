/* The runtime's own ends of the process (bad options, deadlock, step bound, fatal errors):
 * exit_group(2) directly, so that they never go through the _exit interceptor, whose exit
 * summary could replace their status by `exitcode` (intercept_exit.c). */
#include <sys/syscall.h>
#include <unistd.h>

#include "rsan_exit.h"
#include "rsan_report.h"

void rsan_exit_raw(int status) {
  rsan_report_flush_text(); /* the robustness text blocks waiting for the exit */
  for (;;) syscall(SYS_exit_group, status);
}

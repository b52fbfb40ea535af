/* The exit statuses the runtime gives an instrumented program, distinct from the program's
 * own usual ones. Their one definition: the driver reads them from here (passes/abi.py). */
#ifndef RSAN_EXIT_H
#define RSAN_EXIT_H
/* a runtime fatal error: out of memory, no shadow memory, a missing libc function */
#define RSAN_EXIT_FATAL 85
/* a bad PYRSAN_OPTIONS, suppressions or schedule file, at start-up (one line on stderr) */
#define RSAN_EXIT_BAD_OPTIONS 86
/* the controlled scheduler found every thread blocked */
#define RSAN_EXIT_DEADLOCK 87
/* the controlled scheduler reached max_steps scheduling points */
#define RSAN_EXIT_BOUND 88
/* Ends the process now with status, bypassing the _exit interceptor (exit.c). */
void rsan_exit_raw(int status) __attribute__((noreturn));
#endif

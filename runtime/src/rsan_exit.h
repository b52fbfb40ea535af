/* Exit status of a runtime fatal error (out of memory, no shadow memory, a missing libc
 * function): distinct from the program's own statuses and from 86 (bad options), 87
 * (deadlock), 88 (step bound); pyrsan/runner.py EXIT_RUNTIME_FATAL. */
#ifndef RSAN_EXIT_H
#define RSAN_EXIT_H
#define RSAN_EXIT_FATAL 85
/* Ends the process now with status, bypassing the _exit interceptor (exit.c). */
void rsan_exit_raw(int status) __attribute__((noreturn));
#endif

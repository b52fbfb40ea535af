/* The fork server of exploration (docs/scheduling.md "Fork server"): with fork_server=FD
 * (sched=dfs), the process stops at its first scheduling point, when only the main thread
 * exists and nothing has been decided, and serves runs over the socket FD:
 *
 *   server -> driver  "ready\n"                    once, at the first scheduling point
 *   driver -> server  "run <schedule path>\n"      one run
 *                or  "sched <N>\n" + N bytes       one run, the schedule file's text inline
 *   server -> driver  "pid <child pid>\n"           the run's process
 *   server -> driver  "status <wait status>\n"      when it ended (waitpid's raw status)
 *
 * Each run is a forked child that loads the schedule, opens its own trace (trace_path,
 * %p = its pid) and goes on from that point; its reports go to json_path with its own pid
 * (the fork handlers of intercept_fork.c restart the child's report state). Every run starts
 * from the same state, which a run of the program would reach too (the program is
 * deterministic up to its first scheduling point; the explorer checks divergence anyway), so
 * a run costs a fork instead of an exec and the program's start-up. The server never
 * returns to the program: at the end of the socket it exits with _exit (its own buffered
 * output is each child's, printed by the child). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rsan_fork.h"
#include "rsan_report.h"
#include "rsan_sched_internal.h"

/* The process has exactly one thread (/proc/self/stat field 20), so no lock can be held by
 * another one. */
static int one_thread(void) {
  char buf[1024];
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char *p = strrchr(buf, ')');
  for (int field = 2; p && field < 20; field++) p = strchr(p + 1, ' ');
  return p && strtol(p + 1, NULL, 10) == 1;
}

/* A child for one run. With one thread in the process, _Fork: no atfork handler runs, which
 * is what a run started from scratch sees (no fork happened in it; the program's own
 * handlers must not run), and the runtime's handler would take and release each of its
 * thousands of locks in both processes, which made about a fifth of a child's CPU time (the
 * child's copies of the lock words are written, so their pages are copied too). Nobody can
 * hold those locks: the only thread is here, outside the runtime's critical sections. The
 * child starts its own report state as intercept_fork.c's handler would have it (no reports,
 * json_path reopened for its pid); start_run restarts the scheduler. Otherwise fork. */
static pid_t fork_run(int single) {
  if (!single) return fork();
  pid_t pid = _Fork();
  if (pid == 0) {
    rsan_report_fork_lock();
    rsan_report_fork_unlock(1);
  }
  return pid;
}

/* One request line (without its newline) into buf; -1 at the end of the socket. Reads in
 * chunks (the driver is the socket's only writer and waits for each answer, so a chunk holds
 * one request; whatever follows a newline is kept for the next call). */
static char inbuf[1024];
static size_t inlen;

static int read_line(int fd, char *buf, size_t n) {
  for (;;) {
    char *nl = memchr(inbuf, '\n', inlen);
    if (nl) {
      size_t k = (size_t)(nl - inbuf), copy = k < n - 1 ? k : n - 1;
      memcpy(buf, inbuf, copy);
      buf[copy] = 0;
      inlen -= k + 1;
      memmove(inbuf, nl + 1, inlen);
      return (int)copy;
    }
    if (inlen == sizeof inbuf) return -1; /* a line longer than any request */
    ssize_t r = read(fd, inbuf + inlen, sizeof inbuf - inlen);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    inlen += (size_t)r;
  }
}

/* The N bytes after a "sched N" line: what the line's read took already, then the socket.
 * A static buffer: the server's heap stays as it was at the first scheduling point, for
 * every run (docs/scheduling.md "Fork server"). */
static char schedbuf[RSAN_FORK_SERVER_SCHEDULE_MAX];

static int read_bytes(int fd, size_t n) {
  size_t have = inlen < n ? inlen : n;
  memcpy(schedbuf, inbuf, have);
  inlen -= have;
  memmove(inbuf, inbuf + have, inlen);
  while (have < n) {
    ssize_t r = read(fd, schedbuf + have, n - have);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    have += (size_t)r;
  }
  return 0;
}

static void answer(int fd, const char *what, long long v) {
  char line[64];
  int k = snprintf(line, sizeof line, "%s %lld\n", what, v);
  rsan_write_all(fd, line, (size_t)k);
}

/* the child: the scheduler on again (sched.c's fork handler turned it off), its schedule (a
 * file, or len bytes of schedbuf when schedule is NULL), its trace */
static void start_run(const char *schedule, size_t len) {
  rsan_sched.finished = 0;
  rsan_sched.lock.v = 0;
  __atomic_store_n(&rsan_sched_on, 1, __ATOMIC_RELEASE);
  if (schedule) rsan_sched_load_schedule(schedule);
  else rsan_sched_load_schedule_text(schedbuf, len);
  if (rsan_sched_flag.trace_path[0])
    rsan_sched_trace_open(rsan_sched_flag.trace_path, rsan_sched_name(), rsan_sched_seed());
}

void rsan_sched_fork_server(void) {
  int fd = rsan_sched_flag.fork_server;
  rsan_sched_flag.fork_server = -1; /* once: children and a refusing server go on normally */
  if (rsan_sched.nthreads_max > 0 || rsan_sched.step > 0 || rsan_sched.finished) return;
  rsan_sched_trace_forget(); /* the server's own trace would stay empty */
  int single = one_thread();
  rsan_write_all(fd, "ready\n", 6);
  /* no program handler runs in the server: a run's end sends it SIGCHLD, and a handler the
   * program installed before this point would act on state every later run shares (its
   * pipes, files); each run starts with the program's mask */
  sigset_t all, mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &mask);
  char req[1024];
  for (;;) {
    if (read_line(fd, req, sizeof req) < 0) _exit(0);
    size_t len = 0;
    if (strncmp(req, "sched ", 6) == 0) {
      char *end;
      unsigned long long n = strtoull(req + 6, &end, 10);
      if (*end || n > sizeof schedbuf || read_bytes(fd, (size_t)n) < 0) _exit(0);
      len = (size_t)n;
    } else if (strncmp(req, "run ", 4) != 0) _exit(0);
    pid_t pid = fork_run(single);
    if (pid == 0) {
      pthread_sigmask(SIG_SETMASK, &mask, NULL);
      close(fd);
      start_run(req[0] == 'r' ? req + 4 : NULL, len);
      return;
    }
    if (pid < 0) {
      answer(fd, "error", errno);
      continue;
    }
    answer(fd, "pid", pid);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    answer(fd, "status", status);
  }
}

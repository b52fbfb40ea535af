/* The scheduler's stall watch (docs/scheduling.md "Hand-over"; sched.c waits for turns).
 * The thread expected to make progress (the baton holder, or the new thread its parent waits
 * for) is charged its CPU time plus the wall time it spends blocked (kernel state other than
 * R). Time it spends runnable without a CPU is not charged: on a loaded machine a slow step is
 * not a stall, and a hand-over there would make a seeded run depart from its schedule. One
 * waiting thread at a time (the watcher) samples /proc/self/task/TID/stat every slice. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rsan_sched_internal.h"

sched_thread *rsan_sched_runner;
static int watcher;

/* The task's state letter and CPU time (utime + stime); 0 when it cannot be read (it ended). */
static int sample_task(int ktid, char *state, uint64_t *cpu_ns) {
  char path[48], buf[512];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", ktid);
  int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
  syscall(SYS_close, fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
  if (!p || p[1] != ' ') return 0;
  *state = p[2];
  /* after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
   * utime stime (proc(5) fields 3..15) */
  unsigned long long utime, stime;
  if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2) return 0;
  static long hz;
  if (!hz) hz = sysconf(_SC_CLK_TCK);
  *cpu_ns = (utime + stime) * (1000000000ull / (uint64_t)(hz > 0 ? hz : 100));
  return 1;
}

/* One slice of a waiting thread; returns 1 while it is the watcher. Hands over once the runner
 * was charged stall_ns without a step. */
int rsan_sched_stall_check(rsan_stall_watch *sw, int watching, uint64_t stall_ns) {
  uint64_t s = __atomic_load_n(&rsan_sched.step, __ATOMIC_RELAXED), now = rsan_sched_now_ns();
  if (!sw->last || s != sw->step) {
    *sw = (rsan_stall_watch){.step = s, .last = now};
    return watching;
  }
  if (!watching && !__atomic_exchange_n(&watcher, 1, __ATOMIC_ACQUIRE)) watching = 1;
  if (!watching) return 0;
  sched_thread *r = __atomic_load_n(&rsan_sched_runner, __ATOMIC_RELAXED);
  int ktid = r ? __atomic_load_n(&r->t->ktid, __ATOMIC_RELAXED) : -1;
  char state = 0;
  uint64_t cpu = 0;
  if (ktid == 0) { /* a new thread that has not started yet: runnable */
  } else if (ktid < 0 || !sample_task(ktid, &state, &cpu)) {
    sw->charged += now - sw->last; /* unknown, or ended: charged as blocked */
    sw->ktid = 0;
  } else {
    if (sw->ktid == ktid)
      sw->charged += (cpu > sw->cpu ? cpu - sw->cpu : 0) + (state != 'R' ? now - sw->last : 0);
    sw->ktid = ktid;
    sw->cpu = cpu;
  }
  sw->last = now;
  if (sw->charged >= stall_ns) {
    rsan_spin_lock(&rsan_sched.lock);
    if (!rsan_sched.finished && __atomic_load_n(&rsan_sched.step, __ATOMIC_RELAXED) == sw->step)
      rsan_sched_handover("stall");
    rsan_spin_unlock(&rsan_sched.lock);
  }
  return 1;
}

void rsan_sched_stall_unwatch(void) { __atomic_store_n(&watcher, 0, __ATOMIC_RELEASE); }

/* Scout samples (docs/scheduling.md "Scout samples", issue 12): several PCT samples in one
 * process run, without a visible side effect.
 *
 * One PCT sample finds a shape like IRIW or WRC with probability 0.15-0.5, so one process run
 * of an instrumented binary is not enough. Under sched=auto with a fresh seed, the first
 * scheduling point (no decision taken yet, one thread in the process) forks up to `samples`
 * scouts, one after the other. Scout k re-seeds the strategy with seed_k (exactly what a run
 * started with seed=seed_k does, since nothing was decided yet) and runs the program on under
 * the controlled scheduler, confined by a seccomp filter that lets through only system calls
 * with no effect outside the scout (memory, threads, futexes, time, its own signals); every
 * other call (output, input, files, sockets, a fork) fails with EPERM and the scout goes on
 * (one thread's output must not end the sample before the others ran). The scout ends at the
 * hand-over, a deadlock, the step bound or the process exit (or is killed at its deadline).
 * Memory is copy-on-write; an inherited writable shared mapping, a SIGCHLD handler or a
 * blocked SIGCHLD, or a second thread turn scouting off. A scout tells the parent through a
 * shared page whether a report was made and whether it met a choice at all. The parent waits
 * for each in turn (within `sample_ms` of the scouts' CPU time, and 8 times it in wall time; a
 * late one is killed) and stops at the first that reported, then re-seeds itself with that
 * seed_k: the real run follows the same schedule (unless the program's scheduling points
 * depend on what its denied calls would have returned), its reports name seed_k, and
 * `seed=seed_k` reproduces it. No scout reported: the run keeps its own seed (one more sample).
 * Scouting also stops after a scout that met no choice (every seed runs the same schedule).
 *
 * An explicit seed, a schedule file or a trace (every driver run) means no scouting: the run
 * is exactly the sample its seed names. x86-64 Linux only (the filter names its system calls);
 * elsewhere the run is one sample as before. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rsan_report.h"
#include "rsan_sched_internal.h"

int rsan_scout_pending;
int rsan_scout_child;

#if defined(__x86_64__) && defined(__linux__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

/* the kernel's view of a signal's disposition (what the program's sigaction, through the
 * runtime's interceptor, installed): rt_sigaction's own struct layout */
typedef struct kernel_sigaction {
  void *handler;
  unsigned long flags;
  void *restorer;
  uint64_t mask;
} kernel_sigaction;

/* what a scout hands back (a MAP_SHARED page made before the first fork) */
typedef struct scout_result {
  uint32_t done;
  uint32_t reported;
  uint32_t choice;
  uint32_t conflict;
  uint64_t steps; /* decisions taken */
} scout_result;
static scout_result *result;
#define NO_FILTER 2 /* done: the scout could not install its filter */
#define WALL_FACTOR 8

static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* the CPU time of the reaped children (the scouts), in ms */
static uint64_t children_cpu_ms(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_CHILDREN, &ru)) return 0;
  return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000ull +
         (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000ull;
}

/* Scout k's seed. The first scout runs PCT with the options' parameters. Once a scout ran
 * `steps` steps, the seed's top byte (rsan_strategy_seed_with) names, in turn, PCT with a
 * horizon of about half of them and a depth of 3 to 6 (several change points inside the run)
 * or, one scout in three, random choices: neither is best on every shape. Measured (one sample
 * each, 40 seeds): seqlock 0/40 with the defaults (horizon 1000, depth 3), 9/40 with horizon
 * 16 and depth 6, 21/40 random; IRIW 9/40, 27/40, 12/40; WRC 14/40, 21/40 (PCT). */
static uint64_t next_seed(uint64_t base, uint64_t k, uint64_t steps) {
  static const int depths[] = {6, RSAN_STRATEGY_RANDOM_WALK, 4, 6, RSAN_STRATEGY_RANDOM_WALK, 3};
  uint64_t s = mix(base + k * 0x9e3779b97f4a7c15ull);
  if (steps) s = rsan_strategy_seed_with(s, rsan_sched_flag.pct_steps ? 0 : (steps + 1) / 2, depths[k % 6]);
  else s = rsan_strategy_seed_with(s, 0, 0);
  return s ? s : 1;
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000ull + (uint64_t)ts.tv_nsec / 1000000ull;
}

/* ---- in a scout: did two threads' operations conflict? ---- */
/* Two operations of different threads on one 8-byte word, one of them a write, or two SC
 * fences, are dependent (docs/scheduling.md "Trace file"); unless the program orders them
 * anyway, another seed may run them the other way round. Without such a pair every seed runs
 * an equivalent schedule (the same values read, the same verdicts of the monitor), so the
 * other seeds need not be tried. Orders the program fixes, and which are recognised here: a
 * thread's accesses before it spawned the accessing thread, and the accesses of a thread the
 * accessing thread joined (each word remembers its last accessor only: anything else counts
 * as a conflict). */
#define CONFLICT_SLOTS 4096 /* > handover_steps' default; a full table counts as a conflict */
typedef struct word_use {
  uintptr_t word; /* 0: free */
  int tid;        /* the last thread that used it */
  uint64_t step;  /* the step of that use */
  uint8_t written;
} word_use;
static word_use uses[CONFLICT_SLOTS];
static int conflict;
static int parent_of[MAX_THREADS], joined_by[MAX_THREADS];
static uint64_t spawned_at[MAX_THREADS];

/* the use of w by tid at `step` comes after w's last use, whatever the schedule */
static int ordered_after(const word_use *u, int tid) {
  if (u->tid == tid) return 1;
  if (joined_by[u->tid] == tid + 1) return 1;
  return parent_of[tid] == u->tid + 1 && spawned_at[tid] > u->step;
}

void rsan_scout_note(int tid, int kind, uintptr_t addr, int w) {
  uint64_t step = rsan_sched.step;
  if (conflict || tid < 0 || tid >= MAX_THREADS) return;
  switch (kind) {
  case RSAN_SK_SPAWN: /* addr: the child's tid */
    if (addr < MAX_THREADS) parent_of[addr] = tid + 1, spawned_at[addr] = step;
    return;
  case RSAN_SK_JOIN: /* addr: 1 + the tid of a joinee that has ended, or 0 */
    if (addr && addr <= MAX_THREADS) joined_by[addr - 1] = tid + 1;
    return;
  case RSAN_SK_EXIT:
  case RSAN_SK_EXIT_PROCESS:
  case RSAN_SK_FENCE: return;
  case RSAN_SK_FENCE_SC:
    addr = 8, w = 1; /* every SC fence: one word, written */
    break;
  default:
    if (!addr) return;
  }
  uintptr_t word = (addr >> 3) | ((uintptr_t)1 << 63);
  size_t i = (size_t)((word * 0x9e3779b97f4a7c15ull) >> 40) % CONFLICT_SLOTS;
  for (size_t probes = 0; probes < CONFLICT_SLOTS; probes++, i = (i + 1) % CONFLICT_SLOTS) {
    word_use *u = &uses[i];
    if (!u->word) {
      *u = (word_use){.word = word, .tid = tid, .step = step, .written = (uint8_t)(w != 0)};
      return;
    }
    if (u->word != word) continue;
    u->written |= w != 0;
    if (!ordered_after(u, tid) && u->written) conflict = 1;
    u->tid = tid;
    u->step = step;
    return;
  }
  conflict = 1;
}

void rsan_scout_end(void) {
  if (result) {
    result->reported = rsan_report_count() > 0;
    result->choice = (uint32_t)rsan_sched_had_choice;
    result->conflict = (uint32_t)conflict;
    result->steps = rsan_sched.step;
    __atomic_store_n(&result->done, 1, __ATOMIC_RELEASE);
  }
  syscall(SYS_exit_group, 0);
  __builtin_unreachable();
}

/* ---- the filter ---- */
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define NR_IS(nr, skip) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, (skip))
#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LOAD_ARG_LO(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define DENY BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

/* calls with no effect outside the process (beyond CPU time), allowed whatever their
 * arguments; the ones allowed for some arguments only are checked below */
static const int harmless[] = {
    SYS_futex,
    SYS_sched_yield,
    SYS_munmap,
    SYS_mremap,
    SYS_mprotect,
    SYS_brk,
    SYS_clone3,
    SYS_set_robust_list,
    SYS_get_robust_list,
    SYS_rseq,
    SYS_exit,
    SYS_exit_group,
    SYS_rt_sigprocmask,
    SYS_rt_sigaction,
    SYS_rt_sigreturn,
    SYS_sigaltstack,
    SYS_rt_sigpending,
    SYS_rt_sigtimedwait,
    SYS_gettid,
    SYS_getpid,
    SYS_getppid,
    SYS_getuid,
    SYS_geteuid,
    SYS_getgid,
    SYS_getegid,
    SYS_clock_gettime,
    SYS_clock_getres,
    SYS_gettimeofday,
    SYS_time,
    SYS_nanosleep,
    SYS_clock_nanosleep,
    SYS_getrandom,
    SYS_sched_getaffinity,
    SYS_sched_getparam,
    SYS_sched_getscheduler,
    SYS_sched_get_priority_max,
    SYS_sched_get_priority_min,
    SYS_arch_prctl,
    SYS_getrusage,
    SYS_getpriority,
    SYS_uname,
    SYS_membarrier,
    SYS_fstat,
    SYS_newfstatat,
    SYS_statx,
    SYS_close,
    SYS_restart_syscall,
    SYS_getcwd,
    SYS_sysinfo,
    SYS_wait4,
    SYS_waitid,
    SYS_madvise,
};

static int install_filter(int pid) {
  enum { NH = sizeof harmless / sizeof harmless[0] };
  struct sock_filter f[2 * NH + 40];
  int n = 0;
  f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
  f[n++] = (struct sock_filter)DENY;
  f[n++] = (struct sock_filter)LOAD_NR;
  for (int i = 0; i < NH; i++) {
    if (harmless[i] == SYS_madvise) continue;
    f[n++] = (struct sock_filter)NR_IS((unsigned)harmless[i], 1);
    f[n++] = (struct sock_filter)ALLOW;
  }
  /* madvise: not MADV_REMOVE (it frees a shared file's pages) */
  f[n++] = (struct sock_filter)NR_IS(SYS_madvise, 4);
  f[n++] = (struct sock_filter)LOAD_ARG_LO(2);
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_REMOVE, 0, 1);
  f[n++] = (struct sock_filter)DENY;
  f[n++] = (struct sock_filter)ALLOW;
  /* mmap: anonymous, or private (a file is never opened: open is not allowed) */
  f[n++] = (struct sock_filter)LOAD_NR;
  f[n++] = (struct sock_filter)NR_IS(SYS_mmap, 5);
  f[n++] = (struct sock_filter)LOAD_ARG_LO(3);
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_ANONYMOUS, 2, 0);
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_SHARED | MAP_SHARED_VALIDATE, 0, 1);
  f[n++] = (struct sock_filter)DENY;
  f[n++] = (struct sock_filter)ALLOW;
  /* clone: a thread (a new process would leave the scout's memory) */
  f[n++] = (struct sock_filter)LOAD_NR;
  f[n++] = (struct sock_filter)NR_IS(SYS_clone, 4);
  f[n++] = (struct sock_filter)LOAD_ARG_LO(0);
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1);
  f[n++] = (struct sock_filter)ALLOW;
  f[n++] = (struct sock_filter)DENY;
  /* signals to the scout itself */
  f[n++] = (struct sock_filter)LOAD_NR;
  f[n++] = (struct sock_filter)NR_IS(SYS_tgkill, 4);
  f[n++] = (struct sock_filter)LOAD_ARG_LO(0);
  f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)pid, 0, 1);
  f[n++] = (struct sock_filter)ALLOW;
  f[n++] = (struct sock_filter)DENY;
  f[n++] = (struct sock_filter)DENY;
  struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* ---- may the process scout? ---- */
static int read_file(const char *path, char *buf, size_t n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t got = 0;
  while (got + 1 < n) {
    ssize_t k = read(fd, buf + got, n - 1 - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += (size_t)k;
  }
  close(fd);
  buf[got] = 0;
  return got + 1 < n ? (int)got : -1; /* -1: did not fit */
}

/* one thread; no writable shared mapping a scout could write through; SIGCHLD neither
 * handled nor blocked (a scout's end must not reach the program) */
static int may_scout(void) {
  static char buf[1 << 16];
  if (read_file("/proc/self/stat", buf, sizeof buf) < 0) return 0;
  const char *p = strrchr(buf, ')');
  for (int field = 2; p && field < 20; field++) p = strchr(p + 1, ' ');
  if (!p || strtol(p + 1, NULL, 10) != 1) return 0; /* field 20: num_threads */
  if (read_file("/proc/self/maps", buf, sizeof buf) < 0) return 0;
  for (const char *line = buf; *line;) {
    const char *perm = strchr(line, ' ');
    if (!perm || strlen(perm) < 5) return 0;
    if (perm[2] == 'w' && perm[4] == 's') return 0;
    const char *nl = strchr(line, '\n');
    if (!nl) break;
    line = nl + 1;
  }
  kernel_sigaction old;
  if (syscall(SYS_rt_sigaction, SIGCHLD, NULL, &old, sizeof old.mask)) return 0;
  if ((old.flags & SA_SIGINFO) || (old.handler != (void *)SIG_DFL && old.handler != (void *)SIG_IGN))
    return 0;
  sigset_t mask;
  if (sigprocmask(SIG_BLOCK, NULL, &mask) || sigismember(&mask, SIGCHLD)) return 0;
  return 1;
}

/* Waits for the scout until deadline_ms (then kills it) and reaps it. */
static void wait_scout(pid_t pid, uint64_t deadline_ms) {
  int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
  for (;;) {
    if (__atomic_load_n(&result->done, __ATOMIC_ACQUIRE)) break;
    uint64_t now = now_ms();
    if (now >= deadline_ms) break;
    int left = (int)(deadline_ms - now);
    if (pfd >= 0) {
      struct pollfd p = {.fd = pfd, .events = POLLIN};
      int r = poll(&p, 1, left);
      if (r > 0) break;
      if (r < 0 && errno != EINTR) break;
    } else {
      int st;
      if (waitpid(pid, &st, WNOHANG) == pid) {
        pid = -1;
        break;
      }
      struct timespec ts = {0, 200000};
      nanosleep(&ts, NULL);
    }
  }
  if (pid > 0) {
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
  }
  if (pfd >= 0) close(pfd);
}

void rsan_sched_scout(void) {
  if (!__atomic_exchange_n(&rsan_scout_pending, 0, __ATOMIC_ACQ_REL)) return;
  if (rsan_sched.step != 0 || rsan_sched.finished || !may_scout()) return;
  result = mmap(NULL, sizeof *result, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (result == MAP_FAILED) {
    result = NULL;
    return;
  }
  int saved_errno = errno;
  /* The budget is the scouts' CPU time (load-independent: a starved scout is not cut short),
   * and all of them together may take at most WALL_FACTOR times it in wall time (a scout that
   * sleeps or waits uses no CPU). */
  uint64_t budget = rsan_sched_flag.sample_ms, used = 0;
  uint64_t base = rsan_sched_seed(), start = now_ms(), wall_end = start + WALL_FACTOR * budget, scouts = 0;
  uint64_t cpu0 = children_cpu_ms();
  int found = 0;
  uint64_t seen_steps = 0; /* the longest scout yet: PCT's horizon for the next ones */
  for (uint64_t k = 1; k <= rsan_sched_flag.samples && used < budget && now_ms() < wall_end; k++) {
    uint64_t seed_k = next_seed(base, k, seen_steps);
    memset(result, 0, sizeof *result);
    pid_t pid = _Fork(); /* no atfork handler: the program's must not see scouts */
    if (pid < 0) break;
    scouts++;
    if (pid == 0) {
      rsan_scout_child = 1;
      rsan_sched_reseed(seed_k);
      if (install_filter((int)getpid())) { /* no seccomp here: no scouting */
        __atomic_store_n(&result->done, NO_FILTER, __ATOMIC_RELEASE);
        syscall(SYS_exit_group, 0);
      }
      errno = saved_errno;
      return; /* on with the program, as the scout */
    }
    wait_scout(pid, wall_end); /* a slow scout may be a starved one: the wall cap only */
    used = children_cpu_ms() - cpu0;
    if (rsan_flag.verbosity >= 2) {
      char msg[200];
      int m = snprintf(msg, sizeof msg,
                       "pyrsan: scout %llu: seed %llu, %s, %llu steps, choice %u, conflict %u\n",
                       (unsigned long long)k, (unsigned long long)seed_k,
                       !result->done      ? "did not finish"
                       : result->reported ? "reported"
                                          : "no report",
                       (unsigned long long)result->steps, result->choice, result->conflict);
      if (m > 0) rsan_write_all(2, msg, (size_t)m);
    }
    uint32_t done = __atomic_load_n(&result->done, __ATOMIC_ACQUIRE);
    if (done == NO_FILTER) break;
    if (done) {
      if (result->reported) {
        found = 1;
        rsan_sched_reseed(seed_k);
        break;
      }
      /* no choice, or no two dependent operations of different threads: every seed runs a
       * schedule the monitor cannot tell from this one */
      if (!result->choice || !result->conflict) break;
      if (result->steps > seen_steps) seen_steps = result->steps;
    } /* else it crashed (another seed may not), or was killed at the wall cap (the loop ends) */
  }
  if (!found && seen_steps) rsan_sched_reseed(next_seed(base, rsan_sched_flag.samples + 1, seen_steps));
  munmap(result, sizeof *result);
  result = NULL;
  if (rsan_flag.verbosity >= 1) {
    char msg[200];
    int m = snprintf(msg, sizeof msg,
                     "pyrsan: sched=auto: %llu scout sample(s) in %llu ms; the run uses seed %llu%s\n",
                     (unsigned long long)scouts, (unsigned long long)(now_ms() - start),
                     (unsigned long long)rsan_sched_seed(), found ? " (a scout's schedule reported)" : "");
    if (m > 0) rsan_write_all(2, msg, (size_t)m);
  }
  errno = saved_errno;
}

#else
void rsan_scout_note(int tid, int kind, uintptr_t addr, int w) { (void)tid, (void)kind, (void)addr, (void)w; }
void rsan_scout_end(void) {
  syscall(SYS_exit_group, 0);
  __builtin_unreachable();
}
void rsan_sched_scout(void) { rsan_scout_pending = 0; }
#endif

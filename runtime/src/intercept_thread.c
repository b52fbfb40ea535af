/* Thread interceptors: pthread_create / join / tryjoin / timedjoin / clockjoin / detach /
 * exit, and the C11 thrd_create / join / detach / exit (separate symbols in glibc 2.36,
 * which call the pthread implementation directly, not through the PLT).
 *
 * Edges (architecture.md "Decisions and pitfalls", thread create / join):
 *  - create: rsan_thread_create(parent) before the real create; the child calls
 *    rsan_thread_start first thing (trampoline);
 *  - end of the start routine, pthread_exit, thrd_exit, cancellation: rsan_thread_finish
 *    with the thread's stack range (its locations are retired); at the end of the start
 *    routine after the thread's thread_local and key destructors (intercept_tsd.c);
 *  - successful join: rsan_thread_join(joiner, joinee).
 *
 * The map pthread_t -> rsan_thread* needed by join is a small chained hash table under a
 * spinlock; its nodes come from __libc_malloc / __libc_free (never the interposed free).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <threads.h>
#include <time.h>

#include "intercept_internal.h"
#include "rsan_sched.h"

RSAN_REAL_DECL(int, pthread_create, NULL, pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)
RSAN_REAL_DECL(int, pthread_join, NULL, pthread_t, void **)
RSAN_REAL_DECL(int, pthread_tryjoin_np, NULL, pthread_t, void **)
RSAN_REAL_DECL(int, pthread_timedjoin_np, NULL, pthread_t, void **, const struct timespec *)
RSAN_REAL_DECL(int, pthread_clockjoin_np, NULL, pthread_t, void **, clockid_t, const struct timespec *)
RSAN_REAL_DECL(int, pthread_detach, NULL, pthread_t)
RSAN_REAL_DECL(int, pthread_cancel, NULL, pthread_t)
RSAN_REAL_DECL(void, pthread_exit, NULL, void *)
RSAN_REAL_DECL(int, thrd_create, NULL, thrd_t *, thrd_start_t, void *)
RSAN_REAL_DECL(int, thrd_join, NULL, thrd_t, int *)
RSAN_REAL_DECL(int, thrd_detach, NULL, thrd_t)
RSAN_REAL_DECL(void, thrd_exit, NULL, int)

/* ---- the thread map ---- */

/* One per thread created through an interceptor. State changes under map_lock.
 * Lifetime: the parent inserts the node after the real create returned (or frees it when
 * the child is already finished and detached); it is removed and freed by a successful
 * join, or by whichever of detach / finish comes last for a detached thread. */
typedef struct thread_node {
  struct thread_node *next;
  pthread_t key;
  rsan_thread *thread;
  int inserted; /* in the map (the parent's create returned) */
  int detached;
  int finished; /* rsan_thread_finish done; the child no longer touches the node */
  uintptr_t stack_lo, stack_hi; /* its stack block (child_begin), for report names */
} thread_node;

#define MAP_BUCKETS 1024
static thread_node *map_bucket[MAP_BUCKETS];
static atomic_int map_lock_word;

static void map_lock(void) {
  rsan_rt_enter(); /* a signal handler must not wait for the lock its thread holds */
  while (atomic_exchange_explicit(&map_lock_word, 1, memory_order_acquire) != 0) sched_yield();
}
static void map_unlock(void) {
  atomic_store_explicit(&map_lock_word, 0, memory_order_release);
  rsan_rt_leave();
}
void rsan_icpt_map_lock(void) { map_lock(); }
void rsan_icpt_map_unlock(void) { map_unlock(); }

static thread_node **map_slot(pthread_t key) {
  uintptr_t h = (uintptr_t)key;
  h ^= h >> 12;
  h *= 0x9e3779b97f4a7c15ull;
  return &map_bucket[(h >> 40) % MAP_BUCKETS];
}

/* Under map_lock. */
static thread_node *map_find(pthread_t key) {
  for (thread_node *n = *map_slot(key); n; n = n->next)
    if (pthread_equal(n->key, key)) return n;
  return NULL;
}

/* Under map_lock. */
static void map_insert(thread_node *node) {
  thread_node **slot = map_slot(node->key);
  node->next = *slot;
  *slot = node;
  node->inserted = 1;
}

/* Under map_lock. */
static void map_remove(thread_node *node) {
  for (thread_node **p = map_slot(node->key); *p; p = &(*p)->next) {
    if (*p == node) {
      *p = node->next;
      node->inserted = 0;
      return;
    }
  }
}

/* The calling thread's node (NULL for main and threads not created through us). */
static __thread thread_node *self_node __attribute__((tls_model("initial-exec")));

/* ---- create ---- */

typedef struct start_info {
  void *(*posix_fn)(void *);
  int (*c11_fn)(void *);
  void *arg;
  thread_node *node;
} start_info;

/* Allocates the child's state and its node before the real create. NULL on ENOMEM. */
static start_info *prepare_child(int detached) {
  start_info *si = rsan_icpt_malloc(sizeof *si);
  thread_node *node = rsan_icpt_malloc(sizeof *node);
  if (si == NULL || node == NULL) {
    rsan_icpt_free(si);
    rsan_icpt_free(node);
    return NULL;
  }
  rsan_icpt_enter();
  rsan_thread *parent = rsan_thread_current();
  node->thread = rsan_thread_create(parent);
  if (rsan_sched_on) rsan_sched_child_created(node->thread);
  rsan_icpt_leave();
  node->next = NULL;
  node->inserted = 0;
  node->detached = detached;
  node->finished = 0;
  si->node = node;
  return si;
}

/* After the real create succeeded with thread id th: make the child joinable through the
 * map (or drop its node when it already ran to the end detached). */
static void publish_child(thread_node *node, pthread_t th) {
  map_lock();
  node->key = th;
  if (node->finished && node->detached)
    rsan_icpt_free(node); /* the child already ran to the end and nobody can join it */
  else map_insert(node);
  map_unlock();
}

/* The real create failed: the child never ran. Its engine state cannot be discarded
 * (rsan_sync.h has no call for it): it leaks, which is small. */
static void abandon_child(start_info *si) {
  rsan_icpt_free(si->node);
  rsan_icpt_free(si);
}

/* The calling thread's stack block (with glibc, its static TLS too); 0, 0 when unknown.
 * Called with the guard set. */
static void current_stack(const void **lo, const void **hi) {
  pthread_attr_t attr;
  *lo = *hi = NULL;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void *addr;
    size_t size;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
      *lo = addr;
      *hi = (const char *)addr + size;
    }
    pthread_attr_destroy(&attr);
  }
}

/* First thing in the child (before the user routine). The stack block (stack and static
 * TLS) is also retired here, not only at exit: what ran on it after the previous owner's exit
 * (TLS destructors, pthread's exit path) must not look like that thread's accesses to the new
 * one. Nothing of the new thread lives there yet: its instrumented code has not run. */
static void child_begin(thread_node *node) {
  self_node = node;
  rsan_icpt_enter();
  rsan_thread_start(node->thread);
  const void *lo, *hi;
  current_stack(&lo, &hi);
  if (lo && hi > lo) rsan_memory_retire(lo, (size_t)((const char *)hi - (const char *)lo));
  __atomic_store_n(&node->stack_lo, (uintptr_t)lo, __ATOMIC_RELAXED);
  __atomic_store_n(&node->stack_hi, (uintptr_t)hi, __ATOMIC_RELAXED);
  rsan_icpt_leave();
}

/* The main thread's stack: the "[stack]" mapping of /proc/self/maps (read once, at the first
 * report that needs it; raw system calls, no interceptor). */
static uintptr_t main_lo, main_hi;
static int main_known;
static void main_stack(void) {
  if (main_known) return;
  main_known = 1;
  int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  static char buf[1 << 16];
  size_t n = 0;
  for (ssize_t k; n + 1 < sizeof buf && (k = syscall(SYS_read, fd, buf + n, sizeof buf - 1 - n)) > 0;)
    n += (size_t)k;
  syscall(SYS_close, fd);
  buf[n] = 0;
  for (char *line = buf; line && *line;) {
    char *end = strchr(line, '\n');
    if (end) *end = 0;
    if (strstr(line, "[stack]")) {
      char *dash;
      main_lo = (uintptr_t)strtoull(line, &dash, 16);
      main_hi = *dash == '-' ? (uintptr_t)strtoull(dash + 1, NULL, 16) : 0;
      return;
    }
    line = end ? end + 1 : NULL;
  }
}

/* rsan_report.h: the thread whose stack holds addr (a child's stack block while it is in the
 * map, the main thread's "[stack]"), or -1: report names only ("stack of thread T1") */
int rsan_icpt_stack_owner(uintptr_t addr) {
  int tid = -1;
  map_lock();
  for (unsigned b = 0; b < MAP_BUCKETS && tid < 0; b++)
    for (thread_node *n = map_bucket[b]; n; n = n->next) {
      uintptr_t lo = __atomic_load_n(&n->stack_lo, __ATOMIC_RELAXED);
      uintptr_t hi = __atomic_load_n(&n->stack_hi, __ATOMIC_RELAXED);
      if (lo <= addr && addr < hi && n->thread) {
        tid = rsan_thread_tid(n->thread);
        break;
      }
    }
  map_unlock();
  if (tid < 0) {
    main_stack();
    if (main_lo <= addr && addr < main_hi) tid = 0;
  }
  return tid;
}

void rsan_icpt_thread_exit_current(void) {
  thread_node *node = self_node;
  if (node == NULL) {
    /* the main thread's pthread_exit: the others go on without it */
    if (rsan_sched_on) {
      rsan_sched_exit_point();
      rsan_sched_exit_done();
    }
    return;
  }
  self_node = NULL; /* once only, and never touch the node again after this */
  if (rsan_sched_on) rsan_sched_exit_point();
  rsan_sig_thread_exit();

  const void *lo, *hi;
  rsan_icpt_enter();
  current_stack(&lo, &hi);
  rsan_thread_finish(node->thread, lo, hi);
  rsan_icpt_leave();

  map_lock();
  node->finished = 1;
  if (node->detached && node->inserted) {
    map_remove(node);
    rsan_icpt_free(node);
  }
  /* not inserted yet: publish_child frees it when detached, or inserts it for a join */
  map_unlock();
  if (rsan_sched_on) rsan_sched_exit_done(); /* the next thread runs; this one only leaves */
}

static void child_cleanup(void *unused) {
  (void)unused;
  rsan_icpt_thread_exit_current(); /* cancellation, or pthread_exit (then a no-op) */
}

static void *posix_trampoline(void *p) {
  start_info si = *(start_info *)p;
  rsan_icpt_free(p);
  child_begin(si.node);
  void *ret;
  pthread_cleanup_push(child_cleanup, NULL);
  ret = si.posix_fn(si.arg);
  pthread_cleanup_pop(0);
  rsan_icpt_exit_destructors(); /* as the thread's code, before it finishes */
  rsan_icpt_thread_exit_current();
  return ret;
}

static int c11_trampoline(void *p) {
  start_info si = *(start_info *)p;
  rsan_icpt_free(p);
  child_begin(si.node);
  int ret;
  pthread_cleanup_push(child_cleanup, NULL);
  ret = si.c11_fn(si.arg);
  pthread_cleanup_pop(0);
  rsan_icpt_exit_destructors();
  rsan_icpt_thread_exit_current();
  return ret;
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
  if (rsan_icpt_inside()) return REAL(pthread_create)(th, attr, fn, arg);
  int detach_state = PTHREAD_CREATE_JOINABLE;
  if (attr != NULL) pthread_attr_getdetachstate(attr, &detach_state);
  if (rsan_sched_active()) rsan_sched_spawn();
  start_info *si = prepare_child(detach_state == PTHREAD_CREATE_DETACHED);
  if (si == NULL) return EAGAIN;
  si->posix_fn = fn;
  si->c11_fn = NULL;
  si->arg = arg;
  thread_node *node = si->node; /* si belongs to the child once it runs */
  rsan_thread *child = node->thread;
  int rc = REAL(pthread_create)(th, attr, posix_trampoline, si);
  if (rc != 0) abandon_child(si);
  else publish_child(node, *th);
  if (rsan_sched_on) rsan_sched_spawn_done(child, rc == 0);
  return rc;
}

int thrd_create(thrd_t *th, thrd_start_t fn, void *arg) {
  if (rsan_icpt_inside()) return REAL(thrd_create)(th, fn, arg);
  if (rsan_sched_active()) rsan_sched_spawn();
  start_info *si = prepare_child(0);
  if (si == NULL) return thrd_nomem;
  si->posix_fn = NULL;
  si->c11_fn = fn;
  si->arg = arg;
  thread_node *node = si->node;
  rsan_thread *child = node->thread;
  int rc = REAL(thrd_create)(th, c11_trampoline, si);
  if (rc != thrd_success) abandon_child(si);
  else publish_child(node, *th);
  if (rsan_sched_on) rsan_sched_spawn_done(child, rc == thrd_success);
  return rc;
}

/* ---- join / detach ---- */

/* Under the controlled scheduler and for a thread it manages (rsan_sched.h): joins wait in
 * the scheduler; the real join only waits for the joinee's last steps in libc. */
static int controlled(void) { return rsan_sched_active() && rsan_sched_manages_current(); }

/* Before a real join: the joinee's state (NULL when unknown: main thread, not created
 * through us, or already joined). */
static rsan_thread *join_lookup(pthread_t th) {
  map_lock();
  thread_node *node = map_find(th);
  rsan_thread *t = node ? node->thread : NULL;
  map_unlock();
  return t;
}

/* After a successful real join. */
static void join_done(pthread_t th, rsan_thread *joinee) {
  map_lock();
  thread_node *node = map_find(th);
  if (joinee == NULL && node != NULL) joinee = node->thread; /* published after our lookup */
  if (node != NULL && node->thread == joinee) {
    map_remove(node);
    rsan_icpt_free(node);
  }
  map_unlock();
  if (joinee == NULL) return;
  rsan_icpt_enter();
  rsan_thread_join(rsan_thread_current(), joinee);
  rsan_icpt_leave();
}

int pthread_join(pthread_t th, void **ret) {
  if (rsan_icpt_inside()) return REAL(pthread_join)(th, ret);
  rsan_thread *joinee = join_lookup(th);
  if (controlled()) rsan_sched_join(joinee, RSAN_JOIN_WAIT);
  int rc = REAL(pthread_join)(th, ret);
  if (rc == 0) join_done(th, joinee);
  return rc;
}

int pthread_tryjoin_np(pthread_t th, void **ret) {
  if (rsan_icpt_inside()) return REAL(pthread_tryjoin_np)(th, ret);
  rsan_thread *joinee = join_lookup(th);
  int rc;
  /* the scheduler's view, not the OS thread's progress, decides (for a joinee it knows) */
  if (joinee && controlled()) {
    rsan_sched_join(joinee, RSAN_JOIN_TRY);
    rc = rsan_sched_thread_exited(joinee) ? REAL(pthread_join)(th, ret) : EBUSY;
  } else {
    rc = REAL(pthread_tryjoin_np)(th, ret);
  }
  if (rc == 0) join_done(th, joinee);
  return rc;
}

int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime) {
  if (rsan_icpt_inside()) return REAL(pthread_timedjoin_np)(th, ret, abstime);
  rsan_thread *joinee = join_lookup(th);
  int rc;
  if (joinee && controlled()) /* times out only when no other thread can run */
    rc = rsan_sched_join(joinee, RSAN_JOIN_TIMED) ? REAL(pthread_join)(th, ret) : ETIMEDOUT;
  else rc = REAL(pthread_timedjoin_np)(th, ret, abstime);
  if (rc == 0) join_done(th, joinee);
  return rc;
}

int pthread_clockjoin_np(pthread_t th, void **ret, clockid_t clock, const struct timespec *abstime) {
  if (rsan_icpt_inside()) return REAL(pthread_clockjoin_np)(th, ret, clock, abstime);
  rsan_thread *joinee = join_lookup(th);
  int rc;
  if (joinee && controlled())
    rc = rsan_sched_join(joinee, RSAN_JOIN_TIMED) ? REAL(pthread_join)(th, ret) : ETIMEDOUT;
  else rc = REAL(pthread_clockjoin_np)(th, ret, clock, abstime);
  if (rc == 0) join_done(th, joinee);
  return rc;
}

int thrd_join(thrd_t th, int *res) {
  if (rsan_icpt_inside()) return REAL(thrd_join)(th, res);
  rsan_thread *joinee = join_lookup(th);
  if (controlled()) rsan_sched_join(joinee, RSAN_JOIN_WAIT);
  int rc = REAL(thrd_join)(th, res);
  if (rc == thrd_success) join_done(th, joinee);
  return rc;
}

static void detach_done(pthread_t th) {
  map_lock();
  thread_node *node = map_find(th);
  if (node == NULL && pthread_equal(th, pthread_self())) node = self_node; /* not yet published */
  if (node != NULL) {
    node->detached = 1;
    if (node->finished && node->inserted) {
      map_remove(node);
      rsan_icpt_free(node);
    }
  }
  map_unlock();
}

/* A controlled thread waits in the scheduler, not at the real cancellation point: its
 * condition wait is ended (sched_sync.c rsan_sched_cancel), and it acts on the request when it
 * returns to the program (intercept_sync.c). */
int pthread_cancel(pthread_t th) {
  if (!rsan_icpt_inside() && rsan_sched_active()) rsan_sched_cancel(join_lookup(th));
  return REAL(pthread_cancel)(th);
}

int pthread_detach(pthread_t th) {
  if (rsan_icpt_inside()) return REAL(pthread_detach)(th);
  int rc = REAL(pthread_detach)(th);
  if (rc == 0) detach_done(th);
  return rc;
}

int thrd_detach(thrd_t th) {
  if (rsan_icpt_inside()) return REAL(thrd_detach)(th);
  int rc = REAL(thrd_detach)(th);
  if (rc == thrd_success) detach_done(th);
  return rc;
}

/* ---- exit ---- */

void pthread_exit(void *ret) {
  if (!rsan_icpt_inside()) rsan_icpt_thread_exit_current();
  REAL(pthread_exit)(ret);
  __builtin_unreachable();
}

void thrd_exit(int res) {
  if (!rsan_icpt_inside()) rsan_icpt_thread_exit_current();
  REAL(thrd_exit)(res);
  __builtin_unreachable();
}

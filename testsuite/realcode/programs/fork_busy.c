/* fork beside busy threads: two threads hammer atomics (and so the runtime's locks) while
 * the main thread forks 20 children; each child uses atomics itself and exits 0. With
 * -DREPORT_FIRST the parent first makes a robustness report (store buffering with relaxed
 * accesses, under a controlled run), which the children must neither count nor print. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_long counter;
static atomic_int stop;
static atomic_long slots[64];

static void *busy(void *a) {
  long i = 0;
  while (!atomic_load_explicit(&stop, memory_order_acquire)) {
    atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&slots[i++ % 64], 1, memory_order_acq_rel);
    (void)atomic_load(&slots[(i * 7) % 64]);
    if (i % 64 == 0) free(malloc(32));
  }
  return a;
}

#ifdef REPORT_FIRST
static atomic_int x, y;
static int r1, r2;
static void *sb1(void *a) { atomic_store_explicit(&x, 1, memory_order_relaxed); r1 = atomic_load_explicit(&y, memory_order_relaxed); return a; }
static void *sb2(void *a) { atomic_store_explicit(&y, 1, memory_order_relaxed); r2 = atomic_load_explicit(&x, memory_order_relaxed); return a; }
#endif

int main(void) {
#ifdef REPORT_FIRST
  for (int k = 0; k < 50; k++) {
    pthread_t a, b;
    atomic_store(&x, 0);
    atomic_store(&y, 0);
    pthread_create(&a, 0, sb1, 0);
    pthread_create(&b, 0, sb2, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
  }
#endif
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, busy, 0);
  int ok = 0;
  for (int c = 0; c < 20; c++) {
    pid_t pid = fork();
    if (pid == 0) {
      for (int i = 0; i < 100; i++) atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
      free(malloc(16));
      exit(0);
    }
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) ok++;
    else fprintf(stderr, "child %d: status %d\n", c, status);
  }
  atomic_store_explicit(&stop, 1, memory_order_release);
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  printf("children ok: %d\n", ok);
  return ok == 20 ? 0 : 1;
}

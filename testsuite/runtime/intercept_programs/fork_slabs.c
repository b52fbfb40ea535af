/* fork while another thread holds the lock of one of the runtime's size classes
 * (runtime/src/alloc.c, docs/design/clocks.md §20): the worker holds the class of 64-byte
 * blocks for 300 ms (__rsan_test_slab_hold, outside any location lock) while main forks. The
 * fork handler must wait for it; the child then takes a block of that class and writes fresh
 * locations (their history rings come from it) and exits 0. A child that inherited the lock held never returns from
 * its first write (alarm: killed). Prints "ok" when all children exited normally. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

void __rsan_test_slab_hold(size_t n, unsigned ms);
void *__rsan_test_slab_alloc(size_t n);
void __rsan_test_slab_free(void *p, size_t n);

static int holding;

static void *worker(void *arg) {
  (void)arg;
  __atomic_store_n(&holding, 1, __ATOMIC_SEQ_CST);
  __rsan_test_slab_hold(64, 300);
  return NULL;
}

int main(void) {
  for (int k = 0; k < 3; k++) {
    __atomic_store_n(&holding, 0, __ATOMIC_SEQ_CST);
    pthread_t b;
    CHECK(pthread_create(&b, NULL, worker, NULL) == 0);
    while (!__atomic_load_n(&holding, __ATOMIC_SEQ_CST)) sched_yield();
    usleep(50 * 1000); /* the worker is in its 300 ms hold */
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      alarm(10);
      __rsan_test_slab_free(__rsan_test_slab_alloc(64), 64);
      uint32_t *c = calloc(64, sizeof *c);
      CHECK(c != NULL);
      for (int i = 0; i < 32; i++) __rsan_store_4(&c[2 * i], 1, RSAN_RELAXED, 0);
      free(c);
      exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(pthread_join(b, NULL) == 0);
  }
  printf("ok\n");
  return 0;
}

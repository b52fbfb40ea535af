/* fork_locations.c with record slabs given back at once (runtime/src/location_slab.c,
 * docs/design/clocks.md §25: the class's mark set to 0 by the test hook), so that forks meet
 * slabs and pages given back, being given back and reused. As fork_locations.c: each worker, on blocks of its own,
 * loads (records made in the smallest class), adds relaxed (promoted to the class with Wsc),
 * stores release (promoted to the full record) and frees (records back to their class's free
 * list). The child then frees the workers' blocks (retiring takes every record's lock) and
 * touches new locations: it must never find a record lock inherited locked (the fork handler
 * takes the locks of every class). Prints "ok" when all children exited normally. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define N 1024
static int stop;
static uint32_t *shared_block;
static uint32_t *current[2]; /* each worker's block (the child touches them) */

static void *worker(void *arg) {
  uint32_t **cur = arg;
  while (!__atomic_load_n(&stop, __ATOMIC_SEQ_CST)) {
    uint32_t *a = calloc(2 * N, sizeof *a);
    CHECK(a != NULL);
    __atomic_store_n(cur, a, __ATOMIC_SEQ_CST);
    for (int i = 0; i < N; i++) (void)LD(&a[2 * i]);
    for (int i = 0; i < N; i++) __rsan_rmw_4(&a[2 * i], 1, RSAN_RMW_ADD, RSAN_RELAXED, 0);
    for (int i = 0; i < N; i++) __rsan_store_4(&a[2 * i], 2, RSAN_RELEASE, 0);
    __atomic_store_n(cur, NULL, __ATOMIC_SEQ_CST);
    free(a);
  }
  return NULL;
}

uint32_t __rsan_test_lslab_keep(uint32_t n);

int main(void) {
  (void)__rsan_test_lslab_keep(0);
  shared_block = calloc(2 * N, sizeof *shared_block);
  CHECK(shared_block != NULL);
  pthread_t b[2];
  for (int i = 0; i < 2; i++) CHECK(pthread_create(&b[i], NULL, worker, &current[i]) == 0);
  for (int k = 0; k < 60; k++) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      alarm(20);
      for (int w = 0; w < 2; w++) { /* a worker may have held one of their records' locks: */
        uint32_t *a = __atomic_load_n(&current[w], __ATOMIC_SEQ_CST);
        free(a); /* retiring takes each (the block is the child's; its worker is not here) */
      }
      uint32_t *c = calloc(2 * N, sizeof *c);
      CHECK(c != NULL);
      for (int r = 0; r < 4; r++)
        for (int i = 0; i < N; i++) {
          (void)LD(&c[2 * i]);
          __rsan_store_4(&c[2 * i], 2, RSAN_RELEASE, 0);
          (void)LD(&shared_block[2 * i]);
        }
      free(c);
      exit(0);
    }
    for (int i = 0; i < N; i++) (void)LD(&shared_block[2 * i]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  __atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
  for (int i = 0; i < 2; i++) CHECK(pthread_join(b[i], NULL) == 0);
  printf("ok\n");
  return 0;
}

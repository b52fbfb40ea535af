/* free + malloc reuse. T1 writes b->x = 1 and then y = 1 (block b from malloc); T2, after
 * T1 is done (forced invisibly), reads y (so SC forces it to see b->x = 1) and then reads
 * the int at address &b->x.
 * free:    T1 frees b and mallocs a block of the same size (same address, checked) before
 *          T2 reads: the int at that address is a new location, no report.
 * realloc: T1 grows b with realloc (it moves), then mallocs the old size again (the old
 *          address comes back, checked): no report.
 * nosync:  nothing is freed: T2's read of b->x is reported. */
#include <malloc.h>
#include <pthread.h>

#include "common.h"

struct block {
  uint32_t pad;
  uint32_t x;
  char rest[1000]; /* a size class the runtime itself is unlikely to use */
};

/* malloc until the block at `want` comes back (the allocator reuses freed memory quickly;
 * blocks that do not match are kept so that they are not handed out again). */
static struct block *malloc_at(void *want) {
  void *keep[64];
  int n = 0;
  struct block *b = malloc(sizeof *b);
  while (b != NULL && (void *)b != want && n < 64) {
    keep[n++] = b;
    b = malloc(sizeof *b);
  }
  for (int i = 0; i < n; i++) free(keep[i]);
  return b;
}
static uint32_t y;
static uint32_t *addr;
static int t1_done;
static const char *mode;

static void *t1(void *arg) {
  (void)arg;
  struct block *b = malloc(sizeof *b);
  CHECK(b != NULL);
  ST(&b->x, 1);
  ST(&y, 1);
  uint32_t *a = &b->x;
  if (MODE_IS("free")) {
    free(b);
    struct block *b2 = malloc_at(b);
    CHECK((void *)b2 == (void *)b); /* the same memory again */
    b2->x = 0;
  } else if (MODE_IS("realloc")) {
    void *big = realloc(b, 8192);
    CHECK(big != NULL && big != (void *)b);
    struct block *b2 = malloc_at(b);
    CHECK((void *)b2 == (void *)b);
    b2->x = 0;
  }
  __atomic_store_n(&addr, a, __ATOMIC_SEQ_CST);
  flag_set(&t1_done);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  flag_wait(&t1_done);
  uint32_t ry = LD(&y);
  uint32_t rx = LD(__atomic_load_n(&addr, __ATOMIC_SEQ_CST)); /* @load_x */
  CHECK(ry == 1 && rx == (MODE_IS("nosync") ? 1u : 0u));
  return NULL;
}

int main(int argc, char **argv) {
  mode = test_mode(argc, argv);
  pthread_t a, b;
  CHECK(pthread_create(&a, NULL, t1, NULL) == 0);
  CHECK(pthread_create(&b, NULL, t2, NULL) == 0);
  CHECK(pthread_join(a, NULL) == 0);
  CHECK(pthread_join(b, NULL) == 0);
  return 0;
}

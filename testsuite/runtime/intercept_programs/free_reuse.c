/* free + malloc reuse. T1 writes b->x = 1 and then y = 1 (block b from malloc); T2, after
 * T1 is done (forced invisibly), reads y (so SC forces it to see b->x = 1) and then reads
 * the int at address &b->x.
 * free:    T1 frees b and mallocs a block of the same size (same address, checked) before
 *          T2 reads: the int at that address is a new location, no report.
 * realloc: T1 grows b with realloc (it moves), then mallocs the old size again (the old
 *          address comes back, checked): no report.
 * shrink:  the atomic is at offset 512 of b and T1 shrinks b to 16 bytes with realloc (in
 *          place): the bytes past 16 stop being part of the block, so the int there is
 *          retired too; T2 reads that address (still mapped heap memory): no report.
 * nosync / shrink_nosync: nothing is freed or shrunk: T2's read is reported. */
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
  uint32_t *a = strncmp(mode, "shrink", 6) == 0 ? (uint32_t *)((char *)b + 512) : &b->x;
  ST(a, 1);
  ST(&y, 1);
  if (MODE_IS("shrink")) {
    CHECK(realloc(b, 16) == (void *)b);
  } else if (MODE_IS("free")) {
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
  CHECK(ry == 1);
  if (MODE_IS("nosync") || MODE_IS("shrink_nosync")) CHECK(rx == 1);
  if (MODE_IS("free") || MODE_IS("realloc")) CHECK(rx == 0);
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

/* Concurrency Kit (libck-dev; link: -lck): ck_epoch (epoch-based reclamation), 2 readers
 * reading a shared configuration inside epoch sections while 1 writer replaces it and frees
 * the old one after ck_epoch_synchronize. ck_epoch_synchronize is in libck (not instrumented).
 * Checks that no reader saw a freed configuration (a poisoned value). */
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <ck_epoch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

void AnnotateHappensBefore(const char *file, int line, const volatile void *addr) __attribute__((weak));
void AnnotateHappensAfter(const char *file, int line, const volatile void *addr) __attribute__((weak));

#define READERS (SMALL ? 1 : 2)
#define READS (SMALL ? 2 : 2000)
#define UPDATES (SMALL ? 1 : 100)
struct config {
  long a, b; /* b == 2 * a in every published configuration */
};
static ck_epoch_t epoch;
static struct config *current;
static long bad;

static void *reader(void *arg) {
  ck_epoch_record_t *record = malloc(sizeof *record);
  ck_epoch_register(&epoch, record, NULL);
  long seen = 0;
  for (int i = 0; i < READS; i++) {
    ck_epoch_begin(record, NULL);
    struct config *c = ck_pr_load_ptr(&current);
    if (c->b != 2 * c->a) seen++;
    if (AnnotateHappensBefore) AnnotateHappensBefore(__FILE__, __LINE__, &epoch);
    ck_epoch_end(record, NULL);
  }
  ck_epoch_unregister(record);
  __atomic_fetch_add(&bad, seen, __ATOMIC_RELAXED);
  return arg;
}

static void *writer(void *arg) {
  ck_epoch_record_t *record = malloc(sizeof *record);
  ck_epoch_register(&epoch, record, NULL);
  for (long i = 1; i <= UPDATES; i++) {
    struct config *c = malloc(sizeof *c);
    c->a = i;
    c->b = 2 * i;
    struct config *old = ck_pr_load_ptr(&current);
    ck_pr_fence_store(); /* the configuration before its pointer */
    ck_pr_store_ptr(&current, c);
    ck_epoch_synchronize(record);
    if (AnnotateHappensAfter) AnnotateHappensAfter(__FILE__, __LINE__, &epoch);
    old->a = 1; /* poison: a reader still using it would see b != 2a */
    old->b = -1;
    free(old);
  }
  ck_epoch_unregister(record);
  return arg;
}

int main(void) {
  ck_epoch_init(&epoch);
  current = calloc(1, sizeof *current);
  pthread_t r[READERS], w;
  for (int i = 0; i < READERS; i++) pthread_create(&r[i], 0, reader, 0);
  pthread_create(&w, 0, writer, 0);
  for (int i = 0; i < READERS; i++) pthread_join(r[i], 0);
  pthread_join(w, 0);
  free(current);
  printf("%s %ld\n", (bad == 0) ? "ok" : "bad", bad);
  return (bad == 0) ? 0 : 1;
}

/* liburcu (liburcu-dev; link: -lurcu-memb): RCU, memory-barrier flavour. 2 readers read a
 * shared configuration inside read-side critical sections while 1 writer replaces it with
 * rcu_xchg_pointer and frees the old one after synchronize_rcu. synchronize_rcu is in
 * liburcu-memb, not instrumented: the edge from each reader's section to the free after the
 * grace period is told to the sanitizer with TSan's dynamic annotations (weak references:
 * no-ops in the native build), as a program annotated for TSan does. Checks that no reader saw a freed configuration (a poisoned value). */
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#define _LGPL_SOURCE
#include <urcu/urcu-memb.h>
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
static struct config *current;
static long bad;

static void *reader(void *arg) {
  urcu_memb_register_thread();
  long seen = 0;
  for (int i = 0; i < READS; i++) {
    urcu_memb_read_lock();
    struct config *c = rcu_dereference(current);
    if (c->b != 2 * c->a) seen++;
    if (AnnotateHappensBefore) AnnotateHappensBefore(__FILE__, __LINE__, &current);
    urcu_memb_read_unlock();
  }
  urcu_memb_unregister_thread();
  uatomic_add(&bad, seen);
  return arg;
}

static void *writer(void *arg) {
  for (long i = 1; i <= UPDATES; i++) {
    struct config *c = malloc(sizeof *c);
    c->a = i;
    c->b = 2 * i;
    struct config *old = rcu_xchg_pointer(&current, c);
    urcu_memb_synchronize_rcu();
    if (AnnotateHappensAfter) AnnotateHappensAfter(__FILE__, __LINE__, &current);
    old->a = 1; /* poison: a reader still using it would see b != 2a */
    old->b = -1;
    free(old);
  }
  return arg;
}

int main(void) {
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

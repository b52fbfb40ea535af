// robust: yes
// race: no
// reason: MP through a pointer: the node's fields are written, then the pointer stored with release; the reader's memory_order_consume load (compiled and modelled as acquire) reads it and dereferences; reference model (mp_consume): robust; the plain fields are ordered by the release/consume-as-acquire pair
// MP publishing a heap node through an atomic pointer read with memory_order_consume.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct config {
  int version;
  char name[16];
  atomic_int hits;
};

static _Atomic(struct config *) current;

static void *writer(void *arg) {
  (void)arg;
  struct config *c = malloc(sizeof *c);
  c->version = 7;
  snprintf(c->name, sizeof c->name, "v%d", 7);
  atomic_init(&c->hits, 0);
  atomic_store_explicit(&current, c, memory_order_release);
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  struct config *c;
  while ((c = atomic_load_explicit(&current, memory_order_consume)) == NULL) {
  }
  atomic_fetch_add_explicit(&c->hits, 1, memory_order_relaxed);
  printf("%d %s\n", c->version, c->name);
  return NULL;
}

int main(void) {
  pthread_t w, r;
  pthread_create(&r, NULL, reader, NULL);
  pthread_create(&w, NULL, writer, NULL);
  pthread_join(w, NULL);
  pthread_join(r, NULL);
  free(atomic_load(&current));
  return 0;
}

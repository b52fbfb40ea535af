// robust: yes
// race: no
// reason: the struct is copied by assignment only after the acquire load that reads the release store made after the writer filled it
// Struct assignment (plain copy) after release/acquire publication; strcpy into the buffer beforehand.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

struct rec {
  int id;
  char name[16];
  double score;
};
static struct rec shared;
static atomic_int ready;

static void *writer(void *arg) {
  (void)arg;
  shared.id = 7;
  strcpy(shared.name, "seven");
  shared.score = 7.5;
  atomic_store_explicit(&ready, 1, memory_order_release);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, writer, NULL);
  while (!atomic_load_explicit(&ready, memory_order_acquire))
    ;
  struct rec copy = shared;
  pthread_join(t, NULL);
  printf("%d %s %zu\n", copy.id, copy.name, strlen(shared.name));
  return 0;
}

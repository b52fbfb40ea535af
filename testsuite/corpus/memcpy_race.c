// robust: yes
// race: yes
// reason: main memcpy's the whole struct while the worker writes one field without synchronisation: the copy's read of that field races with the write
// Struct copy via memcpy racing with a field write.
#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct rec {
  int id;
  char name[12];
  long score;
};
static struct rec shared = {1, "a", 0};

static void *writer(void *arg) {
  (void)arg;
  shared.score = 42;
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, writer, NULL);
  struct rec copy;
  memcpy(&copy, &shared, sizeof copy);
  pthread_join(t, NULL);
  printf("%ld\n", copy.score);
  return 0;
}

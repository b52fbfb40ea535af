// robust: no
// race: yes
// reason: store buffering through two members of one global struct (relaxed stores, relaxed loads of the other's flag: both may read 0, which SC forbids), and a plain counter in an array of structs updated by both threads without synchronisation (a data race); reports must name the members as written: ctl.side[0].want, ctl.side[1].want, ctl.stats[1].hits
// Two-sided handshake whose per-side state lives in an array of structs inside one global.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

struct side {
  int id;
  atomic_int want;
};
struct stat_row {
  long misses;
  long hits;
};
static struct {
  char tag[12];
  struct side side[2];
  struct stat_row stats[3];
} ctl;

static void *run(void *arg) {
  int me = (int)(long)arg;
  atomic_store_explicit(&ctl.side[me].want, 1, memory_order_relaxed);
  int other = atomic_load_explicit(&ctl.side[1 - me].want, memory_order_relaxed); // pyrsan: violation
  ctl.stats[1].hits += other;
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, run, (void *)0);
  pthread_create(&b, NULL, run, (void *)1);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%ld %d %d\n", ctl.stats[1].hits, atomic_load(&ctl.side[0].want), atomic_load(&ctl.side[1].want));
  return 0;
}

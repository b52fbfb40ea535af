// robust: yes
// race: no
// reason: three detached threads store a malloc'd counter under a pthread key whose destructor (run at thread exit, before the runtime finishes the thread: intercept_tsd.c) adds it to a total and counts a latch down with release; main waits for the latch to reach 0 with acquire, then reads the plain slots the threads wrote before exiting
// pthread_key_create destructors counting down a latch that main waits on (detached threads).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define N 3
static pthread_key_t key;
static atomic_int latch = N;
static atomic_int total;
static int slot[N];

static void release_counter(void *p) {
  atomic_fetch_add_explicit(&total, *(int *)p, memory_order_relaxed);
  free(p);
  atomic_fetch_sub_explicit(&latch, 1, memory_order_release);
}

static void *run(void *arg) {
  int id = (int)(long)arg;
  int *c = malloc(sizeof *c);
  *c = id + 1;
  pthread_setspecific(key, c);
  slot[id] = 10 * (id + 1);
  return NULL;
}

int main(void) {
  pthread_key_create(&key, release_counter);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (long i = 0; i < N; i++) {
    pthread_t t;
    pthread_create(&t, &attr, run, (void *)i);
  }
  while (atomic_load_explicit(&latch, memory_order_acquire) != 0) {
  }
  printf("%d %d\n", slot[0] + slot[1] + slot[2], atomic_load(&total));
  return 0;
}

// robust: yes
// race: yes
// reason: main passes the address of a local (a stack variable of main) to two workers that both increment it without synchronisation, and a spawner thread does the same with a local of its own: data races on main's stack and on the spawner's; no atomics
// Workers updating a counter that lives on main's stack, unsynchronised.
#include <pthread.h>
#include <stdio.h>

struct job {
  long *total;
  int id;
};

static void *worker(void *arg) {
  struct job *j = arg;
  *j->total += j->id;
  return NULL;
}

static void *sub_worker(void *arg) {
  struct job *j = arg;
  *j->total -= j->id;
  return NULL;
}

static void *spawner(void *arg) {
  (void)arg;
  long sub = 0;
  struct job a = {&sub, 1}, b = {&sub, 2};
  pthread_t t1, t2;
  pthread_create(&t1, NULL, sub_worker, &a);
  pthread_create(&t2, NULL, sub_worker, &b);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  return (void *)sub;
}

int main(void) {
  long total = 0;
  struct job a = {&total, 1}, b = {&total, 2};
  pthread_t t1, t2, s;
  pthread_create(&t1, NULL, worker, &a);
  pthread_create(&t2, NULL, worker, &b);
  pthread_create(&s, NULL, spawner, NULL);
  void *sub;
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  pthread_join(s, &sub);
  printf("%ld %ld\n", total, (long)sub);
  return 0;
}

// robust: yes
// race: no
// reason: main forks while two threads do message passing with release/acquire (MP is robust); the child, a copy with one thread, does its own release/acquire handoff through a fresh thread and exits with _exit; the parent waits for the child and joins its threads; no access can read a value SC forbids and every plain access is hb-ordered
// fork() while other threads are mid-way through atomic operations; the child uses threads and atomics too.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_int flag, round_no;
static int data;

static void *producer(void *arg) {
  (void)arg;
  for (int i = 1; i <= 3; i++) {
    while (atomic_load_explicit(&round_no, memory_order_acquire) != i - 1) {
    }
    data = i;
    atomic_store_explicit(&flag, i, memory_order_release);
  }
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  int sum = 0;
  for (int i = 1; i <= 3; i++) {
    while (atomic_load_explicit(&flag, memory_order_acquire) != i) {
    }
    sum += data;
    atomic_store_explicit(&round_no, i, memory_order_release);
  }
  return (void *)(long)sum;
}

static void *child_worker(void *arg) {
  (void)arg;
  data = 100;
  atomic_store_explicit(&flag, 100, memory_order_release);
  return NULL;
}

int main(void) {
  pthread_t p, c;
  pthread_create(&p, NULL, producer, NULL);
  pthread_create(&c, NULL, consumer, NULL);
  pid_t pid = fork();
  if (pid == 0) {
    pthread_t w;
    pthread_create(&w, NULL, child_worker, NULL);
    pthread_join(w, NULL);
    _exit(atomic_load_explicit(&flag, memory_order_acquire) == 100 && data == 100 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  void *sum;
  pthread_join(p, NULL);
  pthread_join(c, &sum);
  printf("child %d, sum %ld\n", WEXITSTATUS(status), (long)sum);
  return 0;
}

// race: no
// robust: yes
// reason: each heap object is filled before it is pushed under the queue's mutex and read (then freed) after it is popped under it
// Heap objects handed from a producer to a consumer through a mutex-protected queue.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct item {
  int id;
  double value[3];
  struct item *next;
};

static struct item *head;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
enum { N = 200 };

static void *producer(void *arg) {
  for (int i = 0; i < N; i++) {
    struct item *it = malloc(sizeof *it);
    it->id = i;
    for (int k = 0; k < 3; k++) it->value[k] = i + k;
    pthread_mutex_lock(&m);
    it->next = head;
    head = it;
    pthread_mutex_unlock(&m);
  }
  return arg;
}

static void *consumer(void *arg) {
  double sum = 0;
  for (int got = 0; got < N;) {
    pthread_mutex_lock(&m);
    struct item *it = head;
    if (it) head = it->next;
    pthread_mutex_unlock(&m);
    if (!it) continue;
    sum += it->id + it->value[0] + it->value[2];
    free(it);
    got++;
  }
  printf("%.0f\n", sum);
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, producer, NULL);
  pthread_create(&b, NULL, consumer, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}

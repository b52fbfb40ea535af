// race: no
// robust: yes
// opt: -O0 -O1
// reason: SC fences are at least acq_rel fences: the writer's fence before the relaxed store and the reader's fence after the relaxed load that reads it synchronise (fence-fence sw, C11 7.17.4)
// Message passing with a relaxed flag between SC fences.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

int data;
atomic_int flag;

static void *writer(void *arg) {
  data = 42;
  atomic_thread_fence(memory_order_seq_cst);
  atomic_store_explicit(&flag, 1, memory_order_relaxed);
  return arg;
}

static void *reader(void *arg) {
  while (atomic_load_explicit(&flag, memory_order_relaxed) != 1) {
  }
  atomic_thread_fence(memory_order_seq_cst);
  printf("%d\n", data);
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, writer, NULL);
  pthread_create(&b, NULL, reader, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}

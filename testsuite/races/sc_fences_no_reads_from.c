// race: yes
// robust: yes
// opt: -O0 -O1
// reason: two SC fences with no atomic read between them do not synchronise (C11 29.3 orders fences only through reads-from; RC11: psc is not part of hb): a race, as ThreadSanitizer also reports (issue 13)
// Plain write, SC fence in one thread; SC fence, plain read in the other.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

int data;

static void *writer(void *arg) {
  data = 1; // pyrsan: race
  atomic_thread_fence(memory_order_seq_cst);
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, writer, NULL);
  usleep(20000);
  atomic_thread_fence(memory_order_seq_cst);
  printf("%d\n", data); // pyrsan: race
  pthread_join(t, NULL);
  return 0;
}

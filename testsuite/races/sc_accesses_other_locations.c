// race: yes
// robust: yes
// opt: -O0 -O1
// reason: seq_cst accesses to different locations create no happens-before (C11 hb = (po ∪ sw)+; sw needs reads-from): the write of data and the read in main are unordered, whatever sc_accesses says (issue 13)
// A seq_cst store of a and a seq_cst load of b do not order a plain write before a plain read.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

int data;
atomic_int a, b;

static void *writer(void *arg) {
  data = 1; // pyrsan: race
  atomic_store(&a, 1);
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, writer, NULL);
  usleep(20000);
  (void)atomic_load(&b);
  printf("%d\n", data); // pyrsan: race
  pthread_join(t, NULL);
  return 0;
}

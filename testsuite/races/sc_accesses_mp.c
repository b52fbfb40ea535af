// race: no
// robust: yes
// opt: -O0 -O1
// reason: a seq_cst store is a release and a seq_cst load that reads it an acquire: they synchronise (the leading and trailing SC fences of sc_accesses=fenced add nothing to hb, but they are not needed here)
// Message passing with seq_cst accesses of one flag.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

int data;
atomic_int flag;

static void *writer(void *arg) {
  data = 42;
  atomic_store(&flag, 1);
  return arg;
}

static void *reader(void *arg) {
  while (atomic_load(&flag) != 1) {
  }
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

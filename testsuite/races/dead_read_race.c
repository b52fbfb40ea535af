// race: yes
// robust: yes
// opt: -O0 -O1 -O2
// reason: the reader's load of data is a C11 data race with the writer's store even though its value is never used; -O1 deletes the load, so pyrsan instruments plain accesses before optimising (issue 13)
// A racy read whose value is dead.
#include <pthread.h>
#include <stdio.h>

int data;

static void *reader(void *arg) {
  int r = data; // pyrsan: race
  (void)r;
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  data = 1; // pyrsan: race
  pthread_join(t, NULL);
  printf("%d\n", data);
  return 0;
}

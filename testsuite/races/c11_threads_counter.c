// race: no
// robust: yes
// reason: C11 mtx_lock / mtx_unlock order the increments; thrd_join orders them before main's read
// A plain counter incremented by C11 threads under a C11 mutex.
#include <stdio.h>
#include <threads.h>

static long counter;
static mtx_t m;

static int work(void *arg) {
  for (int i = 0; i < 500; i++) {
    mtx_lock(&m);
    counter++;
    mtx_unlock(&m);
  }
  return arg != NULL;
}

int main(void) {
  thrd_t t[3];
  mtx_init(&m, mtx_plain);
  for (int i = 0; i < 3; i++) thrd_create(&t[i], work, NULL);
  for (int i = 0; i < 3; i++) thrd_join(t[i], NULL);
  mtx_destroy(&m);
  printf("%ld\n", counter);
  return 0;
}

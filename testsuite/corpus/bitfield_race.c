// robust: yes
// race: yes
// reason: two adjacent bit-fields are one memory location (C11 3.14): two threads writing them concurrently race
// Two threads write neighbouring bit-fields of one struct without synchronisation.
#include <pthread.h>
#include <stdio.h>

struct bits {
  unsigned a : 3;
  unsigned b : 5;
};
static struct bits s;

static void *t1(void *arg) {
  (void)arg;
  s.a = 5;
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  s.b = 9;
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%u %u\n", s.a, s.b);
  return 0;
}

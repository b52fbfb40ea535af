// Store buffering split over three translation units (test_corpus_multi_tu.py): x and y are
// defined in main.c, each thread in its own file publishes with a macro and reads through an
// inline helper of shared.h. Not robust: release/acquire do not order a store before a later load.
#include <pthread.h>
#include <stdio.h>
#include "shared.h"
atomic_int x, y;
int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  puts("done");
  return 0;
}

// robust: yes
// race: no
// reason: 256 short threads pass a token: thread i waits (acquire) for token == i, appends to a plain log and stores token = i + 1 (release); each log write is hb-after the previous one through the chain of release/acquire pairs, and each wait reads the one value it waits for
// 256 threads created at once, ordered by a token passed with release/acquire.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define T 256
static atomic_int token;
static int log_[T];
static int log_len;

static void *step(void *arg) {
  int me = (int)(long)arg;
  while (atomic_load_explicit(&token, memory_order_acquire) != me) {
  }
  log_[log_len++] = me;
  atomic_store_explicit(&token, me + 1, memory_order_release);
  return NULL;
}

int main(void) {
  static pthread_t th[T];
  for (long i = T - 1; i >= 0; i--) pthread_create(&th[i], NULL, step, (void *)i);
  for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
  int ok = log_len == T;
  for (int i = 0; i < T && ok; i++) ok = log_[i] == i;
  printf("%s %d\n", ok ? "ordered" : "BROKEN", log_len);
  return 0;
}

// race: no
// robust: yes
// reason: a detached thread's stack and static TLS are reset when it exits, so the next thread that gets the same memory from glibc's stack cache starts from empty shadow (only a relaxed flag orders the threads in time)
// Detached threads, one after another, writing their __thread array and an escaped stack array.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static __thread long mine[4];
static atomic_int done;

static void *work(void *arg) {
  for (int i = 0; i < 4; i++) mine[i] += (long)arg;
  long local[8];
  long *volatile escaped = local;
  for (int i = 0; i < 8; i++) escaped[i] = i;
  atomic_store_explicit(&done, 1, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (long k = 0; k < 4; k++) {
    pthread_t t;
    atomic_store_explicit(&done, 0, memory_order_relaxed);
    pthread_create(&t, &attr, work, (void *)k);
    while (!atomic_load_explicit(&done, memory_order_relaxed)) {
    }
    usleep(20000); /* let it exit, so that its stack goes back to the cache */
  }
  printf("ok\n");
  return 0;
}

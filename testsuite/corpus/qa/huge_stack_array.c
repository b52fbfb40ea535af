// robust: yes
// race: no
// reason: a thread with a 256 MiB stack fills an 8 MiB array on its stack (plain), publishes its address with release and waits (acquire) until a helper thread, which read the pointer with acquire and summed a sample of it, signals done with release; every plain access of the array is hb-ordered with the other thread's
// A huge stack frame (8 MiB local array) lent to another thread through release/acquire.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define N (1 << 20)
static _Atomic(long *) shared;
static atomic_long done;

static void *owner(void *arg) {
  (void)arg;
  long big[N];
  for (long i = 0; i < N; i++) big[i] = i;
  atomic_store_explicit(&shared, big, memory_order_release);
  long r;
  while ((r = atomic_load_explicit(&done, memory_order_acquire)) == 0) {
  }
  big[0] = r;
  return (void *)big[0];
}

static void *helper(void *arg) {
  (void)arg;
  long *p;
  while ((p = atomic_load_explicit(&shared, memory_order_acquire)) == NULL) {
  }
  long sum = 0;
  for (long i = 0; i < N; i += 4096) sum += p[i];
  atomic_store_explicit(&done, sum, memory_order_release);
  return NULL;
}

int main(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256u << 20);
  pthread_t o, h;
  void *r;
  pthread_create(&o, &attr, owner, NULL);
  pthread_create(&h, NULL, helper, NULL);
  pthread_join(h, NULL);
  pthread_join(o, &r);
  printf("%ld\n", (long)r);
  return 0;
}

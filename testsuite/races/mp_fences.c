// race: no
// robust: yes
// reason: a release fence before the relaxed flag store and an acquire fence after the relaxed load that reads it synchronise (fence-fence sw, C11 7.17.4); ThreadSanitizer ignores such fences and reports a race here
// Message passing with a relaxed flag between release and acquire fences.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

int data;
atomic_int flag;

static void *writer(void *arg) {
  data = 42;
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&flag, 1, memory_order_relaxed);
  return arg;
}

static void *reader(void *arg) {
  while (atomic_load_explicit(&flag, memory_order_relaxed) != 1) {
  }
  atomic_thread_fence(memory_order_acquire);
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

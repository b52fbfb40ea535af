// robust: no
// race: no
// reason: MP with relaxed flag and data at the bottom of a 20,000-deep recursion in each thread: the reader may see the flag and old data (T1's stores are relaxed, no fence); the report's stack is deep (the access is many frames down)
// Message passing whose accesses happen 20,000 calls deep in each thread (a thread with a 64 MiB stack).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int data, flag;

static __attribute__((noinline)) int write_deep(int depth) {
  if (depth == 0) {
    atomic_store_explicit(&data, 1, memory_order_relaxed); // pyrsan: stale
    atomic_store_explicit(&flag, 1, memory_order_relaxed);
    return 0;
  }
  return write_deep(depth - 1) + 1;
}

static __attribute__((noinline)) int read_deep(int depth) {
  if (depth == 0) {
    int f = atomic_load_explicit(&flag, memory_order_relaxed);
    int d = atomic_load_explicit(&data, memory_order_relaxed); // pyrsan: violation
    return f * 2 + d;
  }
  return read_deep(depth - 1);
}

static void *writer(void *arg) { return (void *)(long)write_deep((int)(long)arg); }
static void *reader(void *arg) { return (void *)(long)read_deep((int)(long)arg); }

int main(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64u << 20);
  pthread_t w, r;
  void *out;
  pthread_create(&r, &attr, reader, (void *)20000L);
  pthread_create(&w, &attr, writer, (void *)20000L);
  pthread_join(w, NULL);
  pthread_join(r, &out);
  printf("%ld\n", (long)out);
  return 0;
}

// robust: yes
// race: no
// reason: GCC __atomic builtins on ordinary (non-_Atomic) variables, as older C code does: the fields are initialised with plain stores before the threads are created (thread creation orders them), then only touched through __atomic_* builtins (release store / acquire load of the ready flag, relaxed fetch_add on the counter), and read plainly again after the joins; message passing through one flag with release/acquire is robust
// C code using __atomic_* builtins on plain ints (no _Atomic), plain accesses before create and after join.
#include <pthread.h>
#include <stdio.h>

struct shared {
  int ready;
  int data;
  long hits;
};
static struct shared sh;

static void *producer(void *arg) {
  (void)arg;
  __atomic_store_n(&sh.data, 42, __ATOMIC_RELAXED);
  __atomic_store_n(&sh.ready, 1, __ATOMIC_RELEASE);
  __atomic_fetch_add(&sh.hits, 1, __ATOMIC_RELAXED);
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  while (!__atomic_load_n(&sh.ready, __ATOMIC_ACQUIRE)) {
  }
  int d = __atomic_load_n(&sh.data, __ATOMIC_RELAXED);
  __atomic_fetch_add(&sh.hits, d == 42, __ATOMIC_RELAXED);
  return NULL;
}

int main(void) {
  sh.ready = 0;
  sh.data = -1;
  sh.hits = 0;
  pthread_t p, c;
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&p, NULL, producer, NULL);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  printf("%ld %d\n", sh.hits, sh.data);
  return sh.hits == 2 ? 0 : 1;
}

// robust: yes
// race: no
// reason: message passing through memory from mmap (no global, no heap block): the payload is plain, the flag a release store read by an acquire spin loop; MP with release/acquire is robust and the payload is hb-ordered
// Message passing in an anonymous mmap region shared by two threads.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>

struct box {
  int payload[8];
  atomic_int full;
};
static struct box *b;

static void *producer(void *arg) {
  (void)arg;
  for (int i = 0; i < 8; i++) b->payload[i] = i * i;
  atomic_store_explicit(&b->full, 1, memory_order_release);
  return NULL;
}

int main(void) {
  b = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (b == MAP_FAILED) return 1;
  pthread_t t;
  pthread_create(&t, NULL, producer, NULL);
  while (!atomic_load_explicit(&b->full, memory_order_acquire)) {
  }
  int s = 0;
  for (int i = 0; i < 8; i++) s += b->payload[i];
  pthread_join(t, NULL);
  printf("%d\n", s);
  munmap(b, 4096);
  return 0;
}

// robust: yes
// race: no
// reason: fenced seq_cst: the writer's exchange and each reader's fetch_add carry SC fences, so the writer's wait and the reader's load cannot both miss the other's write (SB with fences); a reader that saw the old config is waited for, and its release decrement orders its reads before the free
// RCU-ish publication: release exchange of a new config, reader counts, free after the readers left.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
struct cfg { int a, b; };
static _Atomic(struct cfg *) current;
static atomic_int readers_in;

static void *reader(void *arg) {
  long s = 0;
  for (int i = 0; i < 2; i++) {
    atomic_fetch_add_explicit(&readers_in, 1, memory_order_seq_cst);
    struct cfg *c = atomic_load_explicit(&current, memory_order_acquire);
    s += c->a + c->b;
    atomic_fetch_sub_explicit(&readers_in, 1, memory_order_release);
  }
  return (void *)s;
}

int main(void) {
  struct cfg *c0 = malloc(sizeof *c0);
  c0->a = 1; c0->b = 2;
  atomic_store_explicit(&current, c0, memory_order_release);
  pthread_t r[2];
  for (int i = 0; i < 2; i++) pthread_create(&r[i], 0, reader, 0);
  struct cfg *c1 = malloc(sizeof *c1);
  c1->a = 3; c1->b = 4;
  struct cfg *old = atomic_exchange_explicit(&current, c1, memory_order_seq_cst);
  while (atomic_load_explicit(&readers_in, memory_order_acquire) != 0)
    ;
  free(old);
  for (int i = 0; i < 2; i++) pthread_join(r[i], 0);
  free(c1);
  puts("ok");
  return 0;
}

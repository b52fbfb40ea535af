// options: --sc-accesses ra
// robust: no
// race: no
// reason: with seq_cst accesses as release/acquire (sc_accesses=ra), the writer's exchange then wait and a reader's fetch_add then load form store buffering: both may read the older value
// RCU-ish publication under sc_accesses=ra: the reader count / pointer pair is not robust.
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
    atomic_fetch_add_explicit(&readers_in, 1, memory_order_seq_cst); // pyrsan: stale
    struct cfg *c = atomic_load_explicit(&current, memory_order_acquire); // pyrsan: violation
    s += c->a + c->b;
    atomic_fetch_sub_explicit(&readers_in, 1, memory_order_release);
  }
  return (void *)s;
}

int main(void) {
  struct cfg *c0 = malloc(sizeof *c0);
  c0->a = 1; c0->b = 2;
  atomic_store_explicit(&current, c0, memory_order_release); // pyrsan: stale
  pthread_t r[2];
  for (int i = 0; i < 2; i++) pthread_create(&r[i], 0, reader, 0);
  struct cfg *c1 = malloc(sizeof *c1);
  c1->a = 3; c1->b = 4;
  struct cfg *old = atomic_exchange_explicit(&current, c1, memory_order_seq_cst); // pyrsan: stale
  while (atomic_load_explicit(&readers_in, memory_order_acquire) != 0) // pyrsan: violation
    ;
  free(old);
  for (int i = 0; i < 2; i++) pthread_join(r[i], 0);
  free(c1);
  puts("ok");
  return 0;
}

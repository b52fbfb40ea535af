// robust: yes
// race: no
// reason: SB where T0 uses seq_cst accesses and T1 a release store, an SC fence and an acquire load: C11's SC-fence rules (RC11) forbid both loads reading 0 when one side has seq_cst accesses and the other an SC fence between them; reference model (sb_sc_vs_fence): robust under sc_accesses=fenced (the default); not under ra, which drops the fences of seq_cst accesses
// SB: seq_cst accesses on one side, an SC fence between release/acquire accesses on the other.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r0, r1;

static void *t0(void *arg) {
  (void)arg;
  atomic_store(&x, 1);
  r0 = atomic_load(&y);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release);
  atomic_thread_fence(memory_order_seq_cst);
  r1 = atomic_load_explicit(&x, memory_order_acquire);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, t0, NULL);
  pthread_create(&b, NULL, t1, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%d %d\n", r0, r1);
  return 0;
}

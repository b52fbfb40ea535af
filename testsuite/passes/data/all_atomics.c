#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

_Atomic uint8_t a8 = 250;
_Atomic uint16_t a16 = 65000;
_Atomic uint32_t a32 = 7;
_Atomic uint64_t a64 = 1ull << 40;
_Atomic int32_t s32 = -5;
_Atomic float af = 1.5f;
_Atomic double ad = 2.25;
_Atomic(int *) ap;
int target[2];
static _Atomic int flag;

static const memory_order orders[] = {memory_order_relaxed, memory_order_consume,
                                      memory_order_acquire, memory_order_release,
                                      memory_order_acq_rel, memory_order_seq_cst};

int main(void) {
  /* loads and stores of every size: 8 stores, 8 loads */
  atomic_store_explicit(&a8, 251, memory_order_release);
  atomic_store_explicit(&a16, 65001, memory_order_relaxed);
  atomic_store(&a32, 8);
  atomic_store_explicit(&a64, (1ull << 40) + 1, memory_order_release);
  atomic_store_explicit(&af, 2.5f, memory_order_release);
  atomic_store(&ad, 3.25);
  atomic_store(&ap, &target[1]);
  atomic_store_explicit(&flag, 1, memory_order_relaxed);
  unsigned long sum = atomic_load_explicit(&a8, memory_order_acquire) +
                      atomic_load_explicit(&a16, memory_order_relaxed) + atomic_load(&a32) +
                      atomic_load_explicit(&a64, memory_order_consume) + atomic_load(&flag);
  float f = atomic_load_explicit(&af, memory_order_acquire);
  double d = atomic_load(&ad);
  int *p = atomic_load_explicit(&ap, memory_order_acquire);
  printf("loads %lu %.2f %.2f %d\n", sum, f, d, (int)(p - target));

  /* read-modify-writes: 13 */
  unsigned r1 = atomic_fetch_add_explicit(&a8, 10, memory_order_relaxed);      /* wraps */
  unsigned r2 = atomic_fetch_sub_explicit(&a16, 2, memory_order_release);
  unsigned r3 = atomic_fetch_or(&a32, 0x30);
  unsigned long r4 = atomic_fetch_and_explicit(&a64, ~1ull, memory_order_acq_rel);
  unsigned r5 = atomic_fetch_xor_explicit(&a32, 5, memory_order_acquire);
  unsigned r6 = atomic_exchange(&a8, 3);
  int r7 = __c11_atomic_fetch_max(&s32, -2, __ATOMIC_SEQ_CST);
  int r8 = __c11_atomic_fetch_min(&s32, -9, __ATOMIC_RELAXED);
  unsigned r9 = __c11_atomic_fetch_nand(&a32, 0xff, __ATOMIC_SEQ_CST);
  unsigned r10 = __c11_atomic_fetch_max(&a16, 3, __ATOMIC_SEQ_CST);
  float r11 = __c11_atomic_fetch_add(&af, 1.25f, __ATOMIC_SEQ_CST);
  double r12 = __c11_atomic_fetch_sub(&ad, 0.5, __ATOMIC_RELAXED);
  int *r13 = atomic_exchange(&ap, &target[0]);
  printf("rmw %u %u %u %lu %u %u %d %d %u %u %.2f %.2f %d\n", r1, r2, r3, r4, r5, r6, r7, r8,
         r9, r10, r11, r12, (int)(r13 - target));
  printf("after %u %u %u %lu %d %.2f %.2f %d\n", atomic_load(&a8), atomic_load(&a16),
         atomic_load(&a32), atomic_load(&a64), atomic_load(&s32), atomic_load(&af),
         atomic_load(&ad), (int)(atomic_load(&ap) - target));  /* 8 more loads */

  /* compare-exchange: every valid (success, failure) pair, weak and strong, 2 sizes;
     each call succeeds or fails deterministically */
  int ok = 0, fails = 0;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j <= i && j < 6; j++) {
      if (orders[j] == memory_order_release || orders[j] == memory_order_acq_rel) continue;
      uint32_t e = atomic_load_explicit(&a32, memory_order_relaxed);
      ok += atomic_compare_exchange_strong_explicit(&a32, &e, e + 1, orders[i], orders[j]);
      uint64_t e64 = 12345;
      fails += !atomic_compare_exchange_strong_explicit(&a64, &e64, 1, orders[i], orders[j]);
      uint16_t e16 = atomic_load_explicit(&a16, memory_order_relaxed);
      while (!atomic_compare_exchange_weak_explicit(&a16, &e16, (uint16_t)(e16 + 1), orders[i],
                                                    orders[j]))
        ;
      ok++;
    }
  int *exp = &target[0];
  ok += atomic_compare_exchange_strong(&ap, &exp, &target[1]);
  af += 1.0f; /* a load and a CAS loop on the float's bits */
  printf("cas %d %d %u %u %lu %.2f\n", ok, fails, atomic_load(&a32), atomic_load(&a16),
         atomic_load(&a64), atomic_load(&af));

  /* fences: 6 thread fences + 6 signal fences */
  for (int i = 0; i < 6; i++) {
    atomic_thread_fence(orders[i]);
    atomic_signal_fence(orders[i]);
  }
  atomic_thread_fence(memory_order_seq_cst);
  printf("done\n");
  return 0;
}

/* pyrsan.h: public annotations for pyrsan's value tracking (RSAN paper §4.3).
 *
 *   pyrsan_wait(obj, value)                 block until the atomic object *obj holds value
 *   pyrsan_bcas(obj, expected, desired)     retry a compare-exchange expected -> desired
 *                                           until it succeeds
 *   pyrsan_track(obj, value)                declare (obj, value) a critical pair
 *   pyrsan_wait_explicit(obj, value, order)
 *   pyrsan_bcas_explicit(obj, expected, desired, order)
 *
 * obj points to an atomic object of any integer or pointer type: `_Atomic T *` in C
 * (<stdatomic.h>), `std::atomic<T> *` in C++. Without an order the operations are seq_cst,
 * as C11's generic atomic functions are. A busy-wait loop or a CAS retry loop written with
 * these is analysed as one blocking operation: the stale reads a weak memory model allows
 * while spinning are not reported, real violations still are (BARW₀,₀ is reported).
 *
 * Under pyrsan the runtime performs the operations (runtime/include/rsan_interface.h,
 * __rsan_wait_N, __rsan_bcas_N, __rsan_track_N). Without pyrsan (plain gcc / clang, no
 * runtime linked) the same calls are a spin loop on an atomic load and a CAS loop, with the
 * same behaviour: the runtime entry points are weak references, null when no runtime is
 * linked. Define PYRSAN_NO_RUNTIME to always use the plain code.
 *
 * C: uses __typeof__ and statement expressions (GNU C, accepted by gcc and clang in every
 * -std mode); obj and value are evaluated once.
 */
#ifndef PYRSAN_H
#define PYRSAN_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#include <atomic>
#include <cstring>
extern "C" {
#else
#include <stdatomic.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define PYRSAN__WEAK __attribute__((weak))
/* Inlined even at -O0, so that the runtime call lands in the annotated function with the
 * annotation's source line: pyrsan's passes give it a site id of its own (the header's
 * frames dropped), and reports name that line. */
#define PYRSAN__FN static inline __attribute__((always_inline, unused))
#define PYRSAN__INLINE inline __attribute__((always_inline))
#else
#define PYRSAN__WEAK
#define PYRSAN__FN static inline
#define PYRSAN__INLINE inline
#endif

void __rsan_wait_1(void *p, uint64_t v, int32_t order, uint64_t site) PYRSAN__WEAK;
void __rsan_wait_2(void *p, uint64_t v, int32_t order, uint64_t site) PYRSAN__WEAK;
void __rsan_wait_4(void *p, uint64_t v, int32_t order, uint64_t site) PYRSAN__WEAK;
void __rsan_wait_8(void *p, uint64_t v, int32_t order, uint64_t site) PYRSAN__WEAK;
void __rsan_bcas_1(void *p, uint64_t expected, uint64_t desired, int32_t order, uint64_t site) PYRSAN__WEAK;
void __rsan_bcas_2(void *p, uint64_t expected, uint64_t desired, int32_t order, uint64_t site) PYRSAN__WEAK;
void __rsan_bcas_4(void *p, uint64_t expected, uint64_t desired, int32_t order, uint64_t site) PYRSAN__WEAK;
void __rsan_bcas_8(void *p, uint64_t expected, uint64_t desired, int32_t order, uint64_t site) PYRSAN__WEAK;
void __rsan_track_1(void *p, uint64_t v, uint64_t site) PYRSAN__WEAK;
void __rsan_track_2(void *p, uint64_t v, uint64_t site) PYRSAN__WEAK;
void __rsan_track_4(void *p, uint64_t v, uint64_t site) PYRSAN__WEAK;
void __rsan_track_8(void *p, uint64_t v, uint64_t site) PYRSAN__WEAK;

/* Internal helpers: 1 when the runtime performed the operation, 0 when the caller must. */
#ifdef PYRSAN_NO_RUNTIME
#define PYRSAN__RT(fn) ((void (*)(void))0)
#else
#define PYRSAN__RT(fn) (fn)
#endif

PYRSAN__FN int pyrsan__rt_wait(const volatile void *p, size_t n, uint64_t v, int order) {
  void *q = (void *)(uintptr_t)p;
  switch (n) {
  case 1:
    if (PYRSAN__RT(__rsan_wait_1)) {
      __rsan_wait_1(q, v, order, 0);
      return 1;
    }
    break;
  case 2:
    if (PYRSAN__RT(__rsan_wait_2)) {
      __rsan_wait_2(q, v, order, 0);
      return 1;
    }
    break;
  case 4:
    if (PYRSAN__RT(__rsan_wait_4)) {
      __rsan_wait_4(q, v, order, 0);
      return 1;
    }
    break;
  case 8:
    if (PYRSAN__RT(__rsan_wait_8)) {
      __rsan_wait_8(q, v, order, 0);
      return 1;
    }
    break;
  default: break;
  }
  return 0;
}

PYRSAN__FN int pyrsan__rt_bcas(const volatile void *p, size_t n, uint64_t e, uint64_t d, int order) {
  void *q = (void *)(uintptr_t)p;
  switch (n) {
  case 1:
    if (PYRSAN__RT(__rsan_bcas_1)) {
      __rsan_bcas_1(q, e, d, order, 0);
      return 1;
    }
    break;
  case 2:
    if (PYRSAN__RT(__rsan_bcas_2)) {
      __rsan_bcas_2(q, e, d, order, 0);
      return 1;
    }
    break;
  case 4:
    if (PYRSAN__RT(__rsan_bcas_4)) {
      __rsan_bcas_4(q, e, d, order, 0);
      return 1;
    }
    break;
  case 8:
    if (PYRSAN__RT(__rsan_bcas_8)) {
      __rsan_bcas_8(q, e, d, order, 0);
      return 1;
    }
    break;
  default: break;
  }
  return 0;
}

PYRSAN__FN void pyrsan__rt_track(const volatile void *p, size_t n, uint64_t v) {
  void *q = (void *)(uintptr_t)p;
  switch (n) {
  case 1:
    if (PYRSAN__RT(__rsan_track_1)) __rsan_track_1(q, v, 0);
    break;
  case 2:
    if (PYRSAN__RT(__rsan_track_2)) __rsan_track_2(q, v, 0);
    break;
  case 4:
    if (PYRSAN__RT(__rsan_track_4)) __rsan_track_4(q, v, 0);
    break;
  case 8:
    if (PYRSAN__RT(__rsan_track_8)) __rsan_track_8(q, v, 0);
    break;
  default: break;
  }
}

/* The failure order of the plain CAS loop for a success order (C11 7.17.7.4: no release). */
static inline int pyrsan__fail_order(int order) {
  return order == 3 /* release */ ? 0 : order == 4 /* acq_rel */ ? 2 : order;
}

#ifdef __cplusplus
} /* extern "C" */

namespace pyrsan_detail {
template <class T> struct same {
  typedef T type;
};
template <class T> inline uint64_t bits(T v) {
  static_assert(sizeof(T) <= 8, "pyrsan: atomic objects of at most 8 bytes");
  uint64_t r = 0;
  std::memcpy(&r, &v, sizeof v); /* zero-extended (little-endian targets) */
  return r;
}
inline std::memory_order fail_order(std::memory_order mo) {
  return static_cast<std::memory_order>(pyrsan__fail_order(static_cast<int>(mo)));
}
} // namespace pyrsan_detail

template <class T>
PYRSAN__INLINE void pyrsan_wait_explicit(std::atomic<T> *obj, typename pyrsan_detail::same<T>::type value,
                                         std::memory_order order) {
  if (pyrsan__rt_wait(obj, sizeof(T), pyrsan_detail::bits(value), static_cast<int>(order))) return;
  while (obj->load(order) != value) sched_yield();
}
template <class T>
PYRSAN__INLINE void pyrsan_wait(std::atomic<T> *obj, typename pyrsan_detail::same<T>::type value) {
  pyrsan_wait_explicit(obj, value, std::memory_order_seq_cst);
}
template <class T>
PYRSAN__INLINE void pyrsan_bcas_explicit(std::atomic<T> *obj, typename pyrsan_detail::same<T>::type expected,
                                         typename pyrsan_detail::same<T>::type desired,
                                         std::memory_order order) {
  if (pyrsan__rt_bcas(obj, sizeof(T), pyrsan_detail::bits(expected), pyrsan_detail::bits(desired),
                      static_cast<int>(order)))
    return;
  for (;;) {
    T e = expected;
    if (obj->compare_exchange_weak(e, desired, order, pyrsan_detail::fail_order(order))) return;
    sched_yield();
  }
}
template <class T>
PYRSAN__INLINE void pyrsan_bcas(std::atomic<T> *obj, typename pyrsan_detail::same<T>::type expected,
                                typename pyrsan_detail::same<T>::type desired) {
  pyrsan_bcas_explicit(obj, expected, desired, std::memory_order_seq_cst);
}
template <class T>
PYRSAN__INLINE void pyrsan_track(std::atomic<T> *obj, typename pyrsan_detail::same<T>::type value) {
  pyrsan__rt_track(obj, sizeof(T), pyrsan_detail::bits(value));
}

#else /* C */

/* Any integer or pointer value as the 64 bits the runtime compares (zero- or sign-extended;
 * the runtime compares at the object's size). */
#define PYRSAN__U64(v) ((uint64_t)(uintptr_t)(v))
/* The value type of the atomic object *obj (atomic_load's result type). */
#define PYRSAN__VT(obj) __typeof__(atomic_load_explicit((obj), memory_order_relaxed))

#define pyrsan_wait_explicit(obj, value, order) \
  __extension__({ \
    __typeof__(obj) pyrsan__o = (obj); \
    PYRSAN__VT(pyrsan__o) pyrsan__v = (value); \
    int pyrsan__mo = (int)(order); \
    _Static_assert(sizeof(*pyrsan__o) <= 8, "pyrsan: atomic objects of at most 8 bytes"); \
    if (!pyrsan__rt_wait(pyrsan__o, sizeof(*pyrsan__o), PYRSAN__U64(pyrsan__v), pyrsan__mo)) \
      while (atomic_load_explicit(pyrsan__o, (memory_order)pyrsan__mo) != pyrsan__v) sched_yield(); \
    (void)0; \
  })

#define pyrsan_bcas_explicit(obj, expected, desired, order) \
  __extension__({ \
    __typeof__(obj) pyrsan__o = (obj); \
    PYRSAN__VT(pyrsan__o) pyrsan__e = (expected); \
    PYRSAN__VT(pyrsan__o) pyrsan__d = (desired); \
    int pyrsan__mo = (int)(order); \
    _Static_assert(sizeof(*pyrsan__o) <= 8, "pyrsan: atomic objects of at most 8 bytes"); \
    if (!pyrsan__rt_bcas(pyrsan__o, sizeof(*pyrsan__o), PYRSAN__U64(pyrsan__e), PYRSAN__U64(pyrsan__d), \
                         pyrsan__mo)) \
      for (;;) { \
        PYRSAN__VT(pyrsan__o) pyrsan__x = pyrsan__e; \
        if (atomic_compare_exchange_weak_explicit(pyrsan__o, &pyrsan__x, pyrsan__d, \
                                                  (memory_order)pyrsan__mo, \
                                                  (memory_order)pyrsan__fail_order(pyrsan__mo))) \
          break; \
        sched_yield(); \
      } \
    (void)0; \
  })

#define pyrsan_track(obj, value) \
  __extension__({ \
    __typeof__(obj) pyrsan__o = (obj); \
    PYRSAN__VT(pyrsan__o) pyrsan__v = (value); \
    pyrsan__rt_track(pyrsan__o, sizeof(*pyrsan__o), PYRSAN__U64(pyrsan__v)); \
    (void)0; \
  })

#define pyrsan_wait(obj, value) pyrsan_wait_explicit((obj), (value), memory_order_seq_cst)
#define pyrsan_bcas(obj, expected, desired) \
  pyrsan_bcas_explicit((obj), (expected), (desired), memory_order_seq_cst)

#endif /* __cplusplus */

#endif /* PYRSAN_H */

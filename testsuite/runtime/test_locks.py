"""The runtime's own locks (runtime/src/lock.c): spin, then park on a futex. Many real threads
(cffi calls release the GIL) take one lock; some holders keep it longer than a waiter spins, so
waiters park and are woken. Mutual exclusion: a plain counter, incremented by a load and a store
apart under the lock, loses no update. No lost wake-up: every thread finishes (a lost one hangs
the test). The signal-deferral depth (rsan_signal.h) is one inside and back to zero after."""
import threading
import time

import cffi

from harness import build_engine_lib

NTHREADS = 8
ITERS = 4000

CDEF = """
int __rsan_test_lock_hammer(uint64_t iters, uint32_t hold_every, uint32_t hold_us);
uint64_t __rsan_test_lock_counter(void);
uint64_t __rsan_test_lock_parks(void);
void __rsan_test_lock_reset(void);
"""


def _lock_lib():
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    return ffi.dlopen(str(build_engine_lib()))


def _hammer(lib, nthreads, iters, hold_every, hold_us):
    results = [None] * nthreads

    def body(k):
        results[k] = lib.__rsan_test_lock_hammer(iters, hold_every, hold_us)

    ts = [threading.Thread(target=body, args=(k,), daemon=True) for k in range(nthreads)]
    for t in ts:
        t.start()
    deadline = time.monotonic() + 60  # generous: the whole run takes well under a second
    for t in ts:
        t.join(timeout=max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in ts), "a waiter was never woken"
    return results


def test_contended_runtime_lock_parks_wakes_and_excludes(engine):
    lib = _lock_lib()
    lib.__rsan_test_lock_reset()
    parks_before = lib.__rsan_test_lock_parks()
    # every 64th holder keeps the lock 200 us, far longer than a waiter spins before parking
    results = _hammer(lib, NTHREADS, ITERS, 64, 200)
    assert results == [0] * NTHREADS  # deferral depth balanced inside and after
    assert lib.__rsan_test_lock_counter() == NTHREADS * ITERS
    assert lib.__rsan_test_lock_parks() > parks_before  # the futex path ran


def test_uncontended_holds_never_lose_an_update(engine):
    lib = _lock_lib()
    lib.__rsan_test_lock_reset()
    results = _hammer(lib, NTHREADS, ITERS, 0, 0)
    assert results == [0] * NTHREADS
    assert lib.__rsan_test_lock_counter() == NTHREADS * ITERS

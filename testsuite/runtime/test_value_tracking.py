"""Value tracking (algorithm.md §4, architecture.md "Value tracking"): the wait / BCAS / track
entry points of rsan_interface.h, the exact strong-CAS check, the bounded history window,
and the public header runtime/include/pyrsan.h built without pyrsan."""
import shutil
import subprocess
import threading
import time

import cffi
import pytest

import harness
from harness import ORDERS, Program, Runtime, line_of, run

HIST = 8  # RSAN_HIST, rsan_internal.h


@pytest.fixture(scope="module")
def vengine():
    ffi = cffi.FFI()
    ffi.cdef(harness.CDEF)
    return ffi, ffi.dlopen(str(harness.build_engine_lib()))


@pytest.fixture
def vrt(vengine, tmp_path):
    ffi, lib = vengine
    r = Runtime(ffi, lib, tmp_path)
    r.reset()
    yield r
    getattr(lib, "__rsan_test_reset")()


def fn(rt, name):
    return getattr(rt.lib, name)


def threads(rt, n):
    new = fn(rt, "__rsan_test_new_thread")
    main = new(rt.ffi.NULL)
    fn(rt, "__rsan_test_set_current")(main)
    return main, [new(main) for _ in range(n)]


def as_(rt, t):
    fn(rt, "__rsan_test_set_current")(t)


@pytest.mark.parametrize("size", [1, 2, 4, 8])
def test_wait_and_bcas_work_at_every_size_and_touch_only_their_bytes(vrt, size):
    p = vrt.var("x")
    pb = vrt.ffi.cast("uint8_t *", p)
    pb[size] = 0xAB  # the byte after the object must survive
    main, (t1,) = threads(vrt, 1)
    as_(vrt, t1)
    full = (1 << (8 * size)) - 1
    fn(vrt, f"__rsan_bcas_{size}")(p, 0, full, ORDERS["acq"], 0)
    assert vrt.load(p, "rlx", 0, size) == full and pb[size] == 0xAB
    # a value given sign-extended compares at the object's size
    fn(vrt, f"__rsan_wait_{size}")(p, 0xFFFFFFFFFFFFFFFF, ORDERS["acq"], 0)
    fn(vrt, f"__rsan_track_{size}")(p, 3, 0)
    fn(vrt, f"__rsan_bcas_{size}")(p, full, 5, ORDERS["sc"], 0)
    assert vrt.load(p, "rlx", 0, size) == 5 and pb[size] == 0xAB
    assert vrt.reports() == []


def test_wait_blocks_until_the_value_is_stored_and_then_acquires(vrt):
    x, d = vrt.var("x"), vrt.var("d")
    main, (t1, t2) = threads(vrt, 2)
    done = []

    def waiter():
        as_(vrt, t2)
        fn(vrt, "__rsan_wait_4")(x, 1, ORDERS["acq"], 0)
        done.append(time.monotonic())

    th = threading.Thread(target=waiter)
    th.start()
    time.sleep(0.2)
    assert not done, "wait returned before the value was stored"
    as_(vrt, t1)
    vrt.store(d, 7, "rlx")
    stored = time.monotonic()
    vrt.store(x, 1, "rel")
    th.join(5)
    assert done and done[0] >= stored
    # the successful read is one acquire load: t2 is now hb-aware of d = 7 (timestamp 1)
    clock = fn(vrt, "__rsan_test_thread_clock")
    assert clock(t2, 0, d) == 1 and clock(t2, 0, x) == 1
    assert vrt.reports() == []


def test_failed_attempts_create_no_events(vrt):
    x = vrt.var("x")
    main, (t1, t2) = threads(vrt, 2)
    as_(vrt, t1)
    vrt.store(x, 1, "rel")
    as_(vrt, t2)
    clock = fn(vrt, "__rsan_test_thread_clock")
    before = [clock(t2, w, x) for w in range(8)]
    for _ in range(3):
        assert fn(vrt, "__rsan_test_wait_once")(x, 2, 4, ORDERS["acq"], 0) == 0
        assert fn(vrt, "__rsan_test_bcas_once")(x, 2, 3, 4, ORDERS["ar"], 0) == 0
    assert [clock(t2, w, x) for w in range(8)] == before
    assert vrt.load(x) == 1 and vrt.reports() == []


def _sb_then(vrt, t2_op, extra_t1_stores=()):
    """SB: t1 stores x = 1 (+ more stores), loads y; t2 stores y, then t2_op(x)."""
    x, y = vrt.var("x"), vrt.var("y")
    main, (t1, t2) = threads(vrt, 2)
    as_(vrt, t1)
    vrt.store(x, 1, "rel", vrt.site("st", line_of(1, 0), "t1", "rel"))
    for v in extra_t1_stores:
        vrt.store(x, v, "rel", vrt.site("st", line_of(1, 1), "t1", "rel"))
    vrt.load(y, "acq", vrt.site("ld", line_of(1, 2), "t1", "acq"))
    as_(vrt, t2)
    vrt.store(y, 1, "rel", vrt.site("st", line_of(2, 0), "t2", "rel"))
    return t2_op(x, vrt.site("ld", line_of(2, 1), "t2", "acq"))


def test_wait_for_a_value_only_a_stale_write_holds_is_reported_before_blocking(vrt):
    # BARW(0,0)'s second wait: x = 0 only in the stale initial write; memory holds 1
    ok = _sb_then(vrt, lambda x, s: fn(vrt, "__rsan_test_wait_once")(x, 0, 4, ORDERS["acq"], s))
    assert ok == 0
    (r,) = vrt.reports()
    assert r["type"] == "read" and r["access"]["operation"] == "wait"
    assert r["access"]["line"] == line_of(2, 1) and r["previous"]["initial"] is True


def test_wait_for_a_value_no_stale_write_holds_is_not_reported(vrt):
    # BARW(0,2): no write of 2 exists
    _sb_then(vrt, lambda x, s: fn(vrt, "__rsan_test_wait_once")(x, 2, 4, ORDERS["acq"], s))
    assert vrt.reports() == []


def test_a_stale_write_of_the_value_is_found_inside_the_window_and_assumed_absent_beyond(vrt):
    # t1: x = 1, then x = 2..; t2 waits for 1 (stale: t2 is hb-aware of the initial write only)
    _sb_then(vrt, lambda x, s: fn(vrt, "__rsan_test_wait_once")(x, 1, 4, ORDERS["acq"], s),
             extra_t1_stores=range(2, HIST + 1))
    assert len(vrt.reports()) == 1
    vrt.reset()
    _sb_then(vrt, lambda x, s: fn(vrt, "__rsan_test_wait_once")(x, 1, 4, ORDERS["acq"], s),
             extra_t1_stores=range(2, HIST + 2))
    assert vrt.reports() == []  # x = 1 left the history: a miss, never a false alarm


@pytest.mark.parametrize("n", range(1, 2 * HIST + 2))
def test_a_growing_history_keeps_every_write_of_the_window(vrt, n):
    """t1 writes 1..n to x (the history doubles 1 -> 2 -> 4 -> 8 entries as it fills, then wraps:
    rsan_internal.h rsan_hist_next); t2, hb-aware of the initial write only, waits for each
    value v < n in turn: stale, found (a report) exactly while the write of v is one of the
    last HIST writes. Fails if a growth loses or moves an entry, or a scan stops short."""
    for v in range(1, n):
        vrt.reset()
        _sb_then(vrt, lambda x, s: fn(vrt, "__rsan_test_wait_once")(x, v, 4, ORDERS["acq"], s),
                 extra_t1_stores=range(2, n + 1))
        assert len(vrt.reports()) == (1 if n - v < HIST else 0), (n, v)


def test_bcas_reading_a_stale_expected_value_is_a_write_violation(vrt):
    ok = _sb_then(vrt, lambda x, s: fn(vrt, "__rsan_test_bcas_once")(x, 0, 2, 4, ORDERS["ar"], s))
    assert ok == 0
    (r,) = vrt.reports()
    assert r["type"] == "write" and r["access"]["operation"] == "bcas"


def test_bcas_cannot_read_a_stale_value_an_rmw_already_read(vrt):
    x, y = vrt.var("x"), vrt.var("y")
    main, (t1, t2) = threads(vrt, 2)
    as_(vrt, t1)
    vrt.rmw(x, "add", 1, "ar")
    vrt.load(y, "acq")
    as_(vrt, t2)
    vrt.store(y, 1, "rel")
    assert fn(vrt, "__rsan_test_bcas_once")(x, 0, 2, 4, ORDERS["ar"], 0) == 0
    assert vrt.reports() == []


# the value an integer RMW writes, at its size (LLVM atomicrmw)
RMW_NEW = {
    "xchg": lambda old, v, m: v,
    "add": lambda old, v, m: (old + v) & m,
    "sub": lambda old, v, m: (old - v) & m,
    "and": lambda old, v, m: old & v,
    "or": lambda old, v, m: old | v,
    "xor": lambda old, v, m: old ^ v,
}


@pytest.mark.parametrize("size", [1, 2, 4, 8])
@pytest.mark.parametrize("op", sorted(RMW_NEW))
def test_an_rmw_records_the_value_it_wrote_at_its_size(vrt, op, size):
    # the history keeps what the RMW wrote (the value checks read it): t2 waiting for that value
    # is stale (SB: t2 is hb-aware of the initial write only), waiting for another is not
    m = (1 << (8 * size)) - 1
    old, v = 0xF0F0F0F0F0F0F0F0 & m, 0x3C3C3C3C3C3C3C3C & m  # add and sub wrap at every size
    new = RMW_NEW[op](old, v, m)
    absent = new ^ 2
    assert absent not in (0, old, new, new ^ 1)
    x, y = vrt.var("x"), vrt.var("y")
    main, (t1, t2) = threads(vrt, 2)
    as_(vrt, t1)
    vrt.store(x, old, "rel", size=size)
    assert vrt.rmw(x, op, v, "rel", size=size) == old
    assert vrt.load(x, "rlx", size=size) == new
    vrt.store(x, new ^ 1, "rel", size=size)  # memory leaves the value: the waits do not succeed
    vrt.load(y, "acq")
    as_(vrt, t2)
    vrt.store(y, 1, "rel")
    wait = fn(vrt, "__rsan_test_wait_once")
    assert wait(x, absent, size, ORDERS["acq"], 0) == 0
    assert vrt.reports() == []
    assert wait(x, new, size, ORDERS["acq"], 0) == 0
    (r,) = vrt.reports()
    assert r["type"] == "read" and r["access"]["operation"] == "wait"


@pytest.mark.parametrize("expected,typ", [(0, "write"), (7, "read")])
def test_strong_cas_check_is_exact_and_carries_no_note(vrt, expected, typ):
    # stale initial 0: a strong CAS expecting 0 may succeed on it (write-type); one expecting 7
    # may fail on it (read-type)
    prog = Program([("st", "x", 1, "rlx"), ("ld", "y", "rlx")],
                   [("st", "y", 1, "rlx"), ("cas", "x", expected, 2, "rlx", "rlx", False)])
    res = run(vrt, prog, (0, 0, 1, 1))
    (r,) = res.reports
    assert r["type"] == typ and r["access"]["operation"] == "compare_exchange_strong"
    assert "note" not in r and "value tracking off" not in r["text"]


def test_strong_cas_whose_only_stale_write_is_expected_and_read_by_an_rmw_is_not_reported(vrt):
    prog = Program([("rmw", "x", "add", 1, "ar"), ("ld", "y", "acq")],
                   [("st", "y", 1, "rel"), ("cas", "x", 0, 5, "ar", "acq", False)])
    res = run(vrt, prog, (0, 0, 1, 1))
    assert res.values[(2, 1)] == (1, 0) and res.reports == []


# ---- the public header without pyrsan ----

HEADER_C = r"""
#include <pyrsan.h>
#include <pthread.h>
#include <stdio.h>
static atomic_int flag, lock;
static _Atomic(signed char) c8;
static _Atomic(short) s16;
static _Atomic(unsigned long long) u64;
static atomic_bool b;
static _Atomic(int *) ptr;
static int target;
static long counter;
static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < 20000; i++) {
    pyrsan_bcas(&lock, 0, 1);
    counter++;
    atomic_store_explicit(&lock, 0, memory_order_release);
  }
  atomic_store(&c8, -1); atomic_store(&s16, 7); atomic_store(&u64, 1ull << 40);
  atomic_store(&b, 1); atomic_store(&ptr, &target);
  atomic_store_explicit(&flag, 1, memory_order_release);
  return NULL;
}
int main(void) {
  pthread_t th;
  pyrsan_track(&flag, 1);
  pthread_create(&th, NULL, worker, NULL);
  for (int i = 0; i < 20000; i++) {
    pyrsan_bcas_explicit(&lock, 0, 1, memory_order_acquire);
    counter++;
    atomic_store_explicit(&lock, 0, memory_order_release);
  }
  pyrsan_wait_explicit(&flag, 1, memory_order_acquire);
  pyrsan_wait(&c8, -1); pyrsan_wait(&s16, 7); pyrsan_wait(&u64, 1ull << 40);
  pyrsan_wait(&b, 1); pyrsan_wait(&ptr, &target);
  pthread_join(th, NULL);
  printf("counter=%ld\n", counter);
  return counter == 40000 ? 0 : 1;
}
"""

HEADER_CPP = r"""
#include <pyrsan.h>
#include <cstdio>
#include <thread>
static std::atomic<int> flag{0}, lock{0};
static std::atomic<signed char> c8{0};
static std::atomic<unsigned long long> u64{0};
static std::atomic<bool> b{false};
static int target;
static std::atomic<int *> ptr{nullptr};
static long counter;
int main() {
  pyrsan_track(&flag, 1);
  std::thread th([] {
    for (int i = 0; i < 20000; i++) { pyrsan_bcas(&lock, 0, 1); counter++; lock.store(0, std::memory_order_release); }
    c8.store(-1); u64.store(1ull << 40); b.store(true); ptr.store(&target);
    flag.store(1, std::memory_order_release);
  });
  for (int i = 0; i < 20000; i++) {
    pyrsan_bcas_explicit(&lock, 0, 1, std::memory_order_acquire); counter++;
    lock.store(0, std::memory_order_release);
  }
  pyrsan_wait_explicit(&flag, 1, std::memory_order_acquire);
  pyrsan_wait(&c8, -1); pyrsan_wait(&u64, 1ull << 40); pyrsan_wait(&b, true); pyrsan_wait(&ptr, &target);
  th.join();
  std::printf("counter=%ld\n", counter);
  return counter == 40000 ? 0 : 1;
}
"""

COMPILERS = [("gcc", "c", "-std=c11"), ("clang-22", "c", "-std=c11"),
             ("g++", "cpp", "-std=c++11"), ("clang++-22", "cpp", "-std=c++11")]


@pytest.mark.parametrize("cc,lang,std", COMPILERS, ids=[c[0] for c in COMPILERS])
@pytest.mark.parametrize("no_runtime", [False, True], ids=["weak", "PYRSAN_NO_RUNTIME"])
def test_header_builds_and_runs_with_plain_compilers(tmp_path, cc, lang, std, no_runtime):
    if not shutil.which(cc):
        pytest.skip(f"{cc} not installed")
    src = tmp_path / f"t.{lang}"
    src.write_text(HEADER_C if lang == "c" else HEADER_CPP)
    exe = tmp_path / "t"
    cmd = [cc, std, "-O2", "-Wall", "-Wextra", "-Werror", f"-I{harness.INC}", str(src), "-o",
           str(exe), "-pthread"] + (["-DPYRSAN_NO_RUNTIME"] if no_runtime else [])
    if lang == "c":
        cmd.insert(2, "-pedantic")
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    res = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout.strip() == "counter=40000"

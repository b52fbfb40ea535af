"""The runtime's verdict on a tiny program, over all of its SC interleavings.

The C engine (engine-only build of testsuite/runtime/harness.py) is driven through cffi as
each thread in turn. Values flow as in a real run: the engine performs every operation on
real memory, loads return what memory holds and a CAS succeeds iff memory holds the expected
value. A weak CAS may also fail spuriously under SC (C11 allows it, and Thm 3.1 quantifies
over every SC run); with spurious=True such a failure is explored too, by handing the engine
an expected value that memory does not hold (exactly the failure path it runs for a real
spurious failure: the read check, then the load update with the failure order).

With sc_accesses=fenced a seq_cst access is explored as its three engine steps (SC fence,
access, SC fence; split_fenced), since a real thread can be preempted between them; run as
one indivisible step the exploration misses violations (test_differential.py,
FENCED_SC_STORE).

Reduction: sleep sets (Godefroid). Two steps of different threads are independent when they
touch no common location, counting the SC-fence location F for SC fences and, with
sc_accesses=fenced, for seq_cst accesses. Independent steps commute on the engine state
(each touches only its thread's clocks and its location's clocks), and a check reads only
those, so every check made in some SC run is also made, with the same outcome, in the
explored run of the same Mazurkiewicz trace (every prefix extends to a complete run: the
programs are straight-line).

wait / BCAS block: a step is enabled only when memory holds the value (so the engine is
called only then and never blocks); a run ends when no step is enabled, and each thread
blocked for good then makes one attempt (__rsan_test_wait_once / __rsan_test_bcas_once:
the check, no event), as the real runtime checks before blocking. A blocked wait's
enabledness changes only through ops on its location, which are dependent with it, so the
sleep sets stay sound; its check reads only its thread's clocks, unchanged while it is
blocked, and writes below its Tsc, which are all there already.

wait(x != v) ("waitne": the loop `while (!atomic_load(&x));` the passes recognise) runs as
__rsan_spin_load_ne_N, the entry point the recognised loop calls: enabled when memory holds
another value. Its failed attempts make no check (a recognised loop that blocks for good is
not checked: a miss), so Verdict.blocked_spin tells the caller that some run ended with a
thread blocked on one, where the model may see a violation the runtime cannot.
"""
from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

_HARNESS = Path(__file__).resolve().parents[1] / "runtime"
if str(_HARNESS) not in sys.path:
    sys.path.insert(0, str(_HARNESS))

import harness  # noqa: E402  (testsuite/runtime/harness.py)

from rc20 import apply_rmw, MASK  # noqa: E402

FLOC = "__F"


def split_fenced(threads):
    """Each seq_cst access as the three engine steps it is made of with sc_accesses=fenced
    (atomic.c op_load & co.): SC fence, the access with the lowered order, SC fence, so that
    other threads can run between them, as they can in a real run (the runtime holds no
    lock across the three)."""
    out = []
    for t in threads:
        ops = []
        for op in t:
            if op[0] == "cas" and "sc" in (op[4], op[5]):
                ms = "ar" if op[4] == "sc" else op[4]
                mf = "acq" if op[5] in ("sc", "ar") else op[5]
                ops += [("fence", "sc"), op[:4] + (ms, mf, op[6]), ("fence", "sc")]
            elif op[0] in ("ld", "st", "rmw", "wait", "waitne", "bcas") and op[-1] == "sc":
                low = {"ld": "acq", "st": "rel", "rmw": "ar", "wait": "acq", "waitne": "acq",
                       "bcas": "ar"}[op[0]]
                ops += [("fence", "sc"), op[:-1] + (low,), ("fence", "sc")]
            else:
                ops.append(op)
        out.append(ops)
    return out


def touched(op, sc: str) -> frozenset:
    """Locations an op's engine call reads or writes (F for SC fences)."""
    if op[0] == "fence":
        return frozenset({FLOC}) if op[1] == "sc" else frozenset()
    if op[0] == "cas":
        fenced = sc == "fenced" and "sc" in (op[4], op[5])
    else:
        fenced = sc == "fenced" and op[-1] == "sc"
    return frozenset({op[1], FLOC}) if fenced else frozenset({op[1]})


def schedules(threads, sc: str = "fenced", spurious: bool = True):
    """Complete SC runs, one per Mazurkiewicz trace at least: lists of (thread, outcome),
    outcome True/False for a CAS (success / failure), None otherwise."""
    nt = len(threads)
    locs = [[touched(op, sc) for op in t] for t in threads]

    def enabled(pos, mem):
        out = []
        for k in range(nt):
            if pos[k] >= len(threads[k]):
                continue
            op = threads[k][pos[k]]
            if op[0] in ("wait", "bcas"):  # blocking: enabled when memory holds the value
                if mem.get(op[1], 0) == op[2]:
                    out.append((k, None))
            elif op[0] == "waitne":  # enabled when memory holds another value
                if mem.get(op[1], 0) != op[2]:
                    out.append((k, None))
            elif op[0] == "cas":
                if mem.get(op[1], 0) == op[2]:
                    out.append((k, True))
                    if op[6] and spurious:
                        out.append((k, False))
                else:
                    out.append((k, False))
            else:
                out.append((k, None))
        return out

    def dep(pos, a, b):
        return a[0] == b[0] or bool(locs[a[0]][pos[a[0]]] & locs[b[0]][pos[b[0]]])

    def step(pos, mem, t):
        k, ok = t
        op = threads[k][pos[k]]
        mem = dict(mem)
        if op[0] == "st":
            mem[op[1]] = op[2]
        elif op[0] == "rmw":
            mem[op[1]] = apply_rmw(op[2], mem.get(op[1], 0), op[3])
        elif op[0] == "cas" and ok:
            mem[op[1]] = op[3] & MASK
        elif op[0] == "bcas":
            mem[op[1]] = op[3] & MASK
        pos = list(pos)
        pos[k] += 1
        return pos, mem

    path: list = []

    def dfs(pos, mem, sleep):
        en = enabled(pos, mem)
        if not en:
            yield list(path)
            return
        done = []
        for t in en:
            if t in sleep:
                continue
            # t stays asleep in the child only while independent steps run
            child_sleep = {s for s in list(sleep) + done if not dep(pos, s, t)}
            npos, nmem = step(pos, mem, t)
            path.append(t)
            # the sleeping steps keep their thread position: rebase dependence on pos
            yield from dfs(npos, nmem, child_sleep)
            path.pop()
            done.append(t)

    yield from dfs([0] * nt, {}, set())




def load_engine():
    """harness.load_engine with the value-tracking entry points (rsan_interface.h) and the
    engine's one-attempt test hooks declared too."""
    import cffi

    ffi = cffi.FFI()
    ffi.cdef(harness.CDEF)
    ffi.cdef(SCHED_HOOK_CDEF)
    return ffi, ffi.dlopen(str(harness.build_engine_lib()))


#: rsan_test.h: the engine's scheduling points (rsan_sched.h) reported to the test driver
SCHED_HOOK_CDEF = """void __rsan_test_set_sched_hook(void (*hook)(int kind, const void *addr, int w));
int __rsan_test_fence_sc_clean(const void *t);"""
#: enum rsan_sched_kind (runtime/src/rsan_sched.h)
SCHED_KIND = {"ld": 0, "st": 1, "rmw": 2, "cas": 2, "fence": 3, "fence_sc": 4}


def point_kind(op) -> int:
    """The scheduling point the engine makes before the step op of split_fenced(...)."""
    if op[0] == "fence":
        return SCHED_KIND["fence_sc" if op[1] == "sc" else "fence"]
    return SCHED_KIND[op[0]]


@dataclass
class Verdict:
    robust: bool
    runs: int
    schedule: list | None = None
    reports: list = field(default_factory=list)
    blocked_spin: bool = False   # some run ended with a thread blocked on a waitne


class Engine:
    """The engine-only runtime library, driven as any thread in any interleaving."""

    def __init__(self, tmpdir=None):
        ffi, lib = load_engine()
        self._tmp = None
        if tmpdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="pyrsan-diff-")
            tmpdir = self._tmp.name
        self.rt = harness.Runtime(ffi, lib, Path(tmpdir))
        self.ffi, self.lib = ffi, lib

    def run(self, threads, sched, sc: str = "fenced"):
        """Runs one complete schedule; returns the number of robustness reports."""
        rt, ffi, rs = self.rt, self.ffi, self.rt.rsan
        rt.reset(f"sc_accesses={sc}")
        names = sorted({op[1] for t in threads for op in t if op[0] != "fence"})
        mem = {n: rt.var(n) for n in names}
        main = rs.test_new_thread(ffi.NULL)
        rs.test_set_current(main)
        ths = [rs.test_new_thread(main) for _ in threads]
        self.threads = ths   # the engine's thread records, for queries after the run
        pos = [0] * len(threads)
        shadow = {n: 0 for n in names}
        for k, ok in sched:
            i = pos[k]
            op = threads[k][i]
            fn = f"t{k + 1}"
            line = harness.line_of(k + 1, i)
            rs.test_set_current(ths[k])
            kind = op[0]
            if kind == "ld":
                v = rt.load(mem[op[1]], op[2], rt.site("ld", line, fn, op[2]))
                assert v == shadow[op[1]], "engine memory differs from the SC simulation"
            elif kind == "st":
                rt.store(mem[op[1]], op[2], op[3], rt.site("st", line, fn, op[3]))
                shadow[op[1]] = op[2]
            elif kind == "rmw":
                old = rt.rmw(mem[op[1]], op[2], op[3], op[4], rt.site("rmw", line, fn, op[4]))
                assert old == shadow[op[1]], "engine memory differs from the SC simulation"
                shadow[op[1]] = apply_rmw(op[2], old, op[3])
            elif kind == "cas":
                cur = shadow[op[1]]
                # a spurious failure: an expected value memory does not hold
                exp = op[2] if (ok or cur != op[2]) else (cur ^ 0x40000000)
                old, res = rt.cas(mem[op[1]], exp, op[3], op[4], op[5], op[6],
                                  rt.site("cas", line, fn, op[4]))
                assert old == cur and bool(res) == bool(ok), "CAS outcome differs from the schedule"
                if res:
                    shadow[op[1]] = op[3]
            elif kind == "fence":
                rt.fence(op[1], rt.site("fence", line, fn, op[1]))
            elif kind == "waitne":
                assert shadow[op[1]] != op[2], "a blocked wait(x != v) was scheduled"
                seen = getattr(self.lib, "__rsan_spin_load_ne_4")(
                    mem[op[1]], op[2], harness.ORDERS[op[3]], rt.site("ld", line, fn, op[3]))
                assert seen == shadow[op[1]], "engine memory differs from the SC simulation"
            elif kind in ("wait", "bcas"):
                assert shadow[op[1]] == op[2], "a blocked wait / BCAS was scheduled"
                assert self._value_op(mem, op, line, fn) == 1
                if kind == "bcas":
                    shadow[op[1]] = op[3]
            else:
                raise ValueError(op)
            pos[k] += 1
        # threads blocked for good on a wait / BCAS: its attempt (checked, no event)
        for k, t in enumerate(threads):
            if pos[k] < len(t) and t[pos[k]][0] in ("wait", "bcas"):
                rs.test_set_current(ths[k])
                op = t[pos[k]]
                assert self._value_op(mem, op, harness.line_of(k + 1, pos[k]), f"t{k + 1}") == 0
            elif pos[k] < len(t) and t[pos[k]][0] == "waitne":
                self.blocked_spin = True   # a recognised loop that spins for good: unchecked
        rs.test_set_current(main)
        return int(rs.test_report_count())

    def run_on_threads(self, threads, sched, sc: str = "fenced"):
        """Runs one schedule of split_fenced(threads) with each thread of the program on its
        own OS thread and every seq_cst access as ONE ABI call: the steps inside an access
        are the engine's own scheduling points (__rsan_test_set_sched_hook), where each
        thread waits for its turn. Checks that the engine makes exactly the points the split
        program predicts. Returns the number of robustness reports. Plain accesses and
        fences only (no CAS, wait or BCAS)."""
        import threading

        rt, ffi, rs = self.rt, self.ffi, self.rt.rsan
        if any(op[0] not in ("ld", "st", "rmw", "fence") for t in threads for op in t):
            raise ValueError("run_on_threads: loads, stores, RMWs and fences only")
        split = split_fenced(threads) if sc == "fenced" else threads
        rt.reset(f"sc_accesses={sc}")
        names = sorted({op[1] for t in threads for op in t if op[0] != "fence"})
        mem = {n: rt.var(n) for n in names}
        main = rs.test_new_thread(ffi.NULL)
        rs.test_set_current(main)
        ths = [rs.test_new_thread(main) for _ in threads]
        sites = [[rt.site(op[0] if op[0] != "fence" else "fence", harness.line_of(k + 1, i), f"t{k + 1}",
                          op[-1]) for i, op in enumerate(t)] for k, t in enumerate(threads)]
        arrived = threading.Semaphore(0)
        turn = [threading.Semaphore(0) for _ in threads]
        seen = [None] * len(threads)  # the point each thread waits at (None: it finished)
        local = threading.local()

        @ffi.callback("void(int, void *, int)")
        def hook(kind, addr, w):
            k = local.k
            seen[k] = kind
            arrived.release()
            turn[k].acquire()

        def body(k):
            local.k = k
            rs.test_set_current(ths[k])
            for i, op in enumerate(threads[k]):
                if op[0] == "ld":
                    rt.load(mem[op[1]], op[2], sites[k][i])
                elif op[0] == "st":
                    rt.store(mem[op[1]], op[2], op[3], sites[k][i])
                elif op[0] == "rmw":
                    rt.rmw(mem[op[1]], op[2], op[3], op[4], sites[k][i])
                else:
                    rt.fence(op[1], sites[k][i])
            seen[k] = None
            arrived.release()

        getattr(self.lib, "__rsan_test_set_sched_hook")(hook)
        workers = []
        try:
            for k in range(len(threads)):  # each runs up to its first point, one at a time
                workers.append(threading.Thread(target=body, args=(k,), daemon=True))
                workers[-1].start()
                arrived.acquire()
            pos = [0] * len(threads)
            for k, _ in sched:
                assert seen[k] == point_kind(split[k][pos[k]]), \
                    f"T{k + 1} step {pos[k]}: the engine's point is {seen[k]}, expected {split[k][pos[k]]}"
                pos[k] += 1
                turn[k].release()  # one step: up to its next point, or its end
                arrived.acquire()
            assert all(s is None for s in seen), "a thread has steps the schedule did not run"
        finally:
            getattr(self.lib, "__rsan_test_set_sched_hook")(ffi.NULL)
            for k, s in enumerate(seen):
                if s is not None:
                    turn[k].release()
            for w in workers:
                w.join(timeout=10)
        rs.test_set_current(main)
        return int(rs.test_report_count())

    def _value_op(self, mem, op, line, fn):
        """One attempt of a wait / BCAS (1: it succeeded)."""
        rt, ORD = self.rt, harness.ORDERS
        if op[0] == "wait":
            return getattr(self.lib, "__rsan_test_wait_once")(mem[op[1]], op[2], 4, ORD[op[3]],
                                                  rt.site("ld", line, fn, op[3]))
        return getattr(self.lib, "__rsan_test_bcas_once")(mem[op[1]], op[2], op[3], 4, ORD[op[4]],
                                              rt.site("rmw", line, fn, op[4]))

    def verdict(self, threads, sc: str = "fenced", spurious: bool = True,
                stop_at_first: bool = True, split_sc: bool = True) -> Verdict:
        """split_sc: with sc_accesses=fenced, let other threads run between the leading SC
        fence, the access and the trailing SC fence of a seq_cst access (see split_fenced),
        each run as its own engine step; False runs each seq_cst access as one ABI call, on
        threads, preempted at the engine's own scheduling points inside it
        (run_on_threads)."""
        program = threads
        if sc == "fenced":
            threads = split_fenced(threads)
        runs = 0
        first = None
        self.blocked_spin = False
        for sched in schedules(threads, sc, spurious):
            runs += 1
            found = (self.run(threads, sched, sc) if split_sc or sc != "fenced"
                     else self.run_on_threads(program, sched, sc))
            if found:
                if first is None:
                    first = Verdict(False, runs, sched, self.rt.reports())
                if stop_at_first:
                    return first
        if first is not None:
            first.runs = runs
            return first
        return Verdict(True, runs, blocked_spin=self.blocked_spin)

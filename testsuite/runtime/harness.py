"""Engine-only build of the pyrsan runtime and a small driver for cffi unit tests.

The library is built from every runtime/src/*.c except intercept_*.c (plus stack_helper.c,
a stand-in for instrumented code) with -DRSAN_DEBUG, into a temp directory keyed by a hash
of the sources, flags and compiler. Tests drive the real __rsan_* ABI as any thread, in any
interleaving, through the test hooks of runtime/src/rsan_test.h.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import cffi

from pyrsan import abi

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# PYRSAN_TEST_RUNTIME_SRC: test another copy of runtime/src (e.g. a mutated one)
SRC = Path(os.environ.get("PYRSAN_TEST_RUNTIME_SRC", ROOT / "runtime" / "src"))
INC = ROOT / "runtime" / "include"
CFLAGS = ["-std=c11", "-O1", "-g", "-fPIC", "-shared", "-fno-omit-frame-pointer",
          "-D_GNU_SOURCE", "-DRSAN_DEBUG", "-pthread", f"-I{INC}", f"-I{SRC}"]

MAX_SITES = 1024  # per run (Runtime.reset)


def interface_cdef() -> str:
    """runtime/include/rsan_interface.h as cffi declarations: the header itself without its
    preprocessor lines (cffi reads declarations only), so that the tests call the ABI the
    passes compile against."""
    text = (INC / "rsan_interface.h").read_text(encoding="utf-8")
    text = re.sub(r"^#ifdef __cplusplus$.*?^#endif$", "", text, flags=re.MULTILINE | re.DOTALL)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


# The runtime's internal and test entry points the tests drive (rsan_internal.h, rsan_test.h).
CDEF = interface_cdef() + r"""
typedef struct rsan_thread rsan_thread;
rsan_thread *rsan_thread_current(void);
int rsan_thread_tid(const rsan_thread *t);
rsan_thread *rsan_thread_create(rsan_thread *parent);
void rsan_thread_start(rsan_thread *child);
void rsan_thread_finish(rsan_thread *t, const void *stack_lo, const void *stack_hi);
void rsan_thread_join(rsan_thread *joiner, rsan_thread *joinee);
void rsan_sync_acquire(rsan_thread *t, const void *addr);
void rsan_sync_release(rsan_thread *t, const void *addr);
void rsan_memory_retire(const void *p, size_t n);
void rsan_race_free(const void *p, size_t n);

void __rsan_test_reset(void);
rsan_thread *__rsan_test_new_thread(rsan_thread *parent);
void __rsan_test_set_current(rsan_thread *t);
int __rsan_test_set_options(const char *opts);
const char *__rsan_test_last_error(void);
uint64_t __rsan_test_report_count(void);
uint64_t __rsan_test_location_id(const void *addr);
uint64_t __rsan_test_location_count(void);
int __rsan_test_location_class(const void *addr);
uint64_t __rsan_test_location_promotions(void);
uint64_t __rsan_test_location_shrinks(void);
uint64_t __rsan_test_location_facts(const void *addr);
uint64_t __rsan_test_location_stamp(const void *addr);
uint64_t __rsan_test_location_records(int cls);
void *__rsan_test_slab_alloc(size_t n);
void __rsan_test_slab_free(void *p, size_t n);
uint64_t __rsan_test_slab_bytes(void);
int64_t __rsan_test_buddy_free_bytes(size_t n);
void *__rsan_test_ring_alloc(size_t n);
uint32_t __rsan_test_buddy_keep(uint32_t n);
void __rsan_test_ring_free(void *p, size_t n);
int64_t __rsan_test_history_value(const void *addr, int i);
void __rsan_test_set_promote_hook(void (*h)(const void *addr));
uint64_t __rsan_test_thread_clock(const rsan_thread *t, int which, const void *addr);
uint64_t __rsan_test_undecided_count(void);
uint64_t __rsan_test_inexact_count(void);
uint32_t __rsan_test_slot_count(void);
void __rsan_test_skip_epochs(rsan_thread *t, uint64_t n);


uint64_t helper_outer_load(uint32_t *p, uint64_t call_site, uint64_t load_site);
uint64_t helper_deep_load(int n, uint32_t *p, uint64_t call_site, uint64_t load_site);
void helper_chain_store(int n, const uint64_t *calls, uint32_t *p, uint64_t v, uint64_t site);
void helper_chain_stale_store(int n, const uint64_t *calls, int k, uint64_t stale_site, uint32_t *p, uint64_t v,
                              uint64_t site);
/* the history's key pool (history.c, rsan_location.h rsan_hkey: site, stack[4], kind) */
typedef struct rsan_hkey { uint64_t site; uint64_t stack[4]; uint64_t kind; } rsan_hkey;
uint32_t rsan_hist_key_put(const rsan_hkey *k);
void rsan_hist_key_get(uint32_t i, rsan_hkey *out);
typedef struct rsan_write {
  uint64_t ts, tsU, site, value;
  uint64_t stack[4];
  int32_t tid;
  uint8_t order, op, rmw_op, rmw, size;
} rsan_write;
int __rsan_test_history_write(const void *addr, int i, rsan_write *out);
/* one-attempt test hooks of value tracking (atomic.c) */
int __rsan_test_wait_once(void *p, uint64_t v, int32_t size, int32_t order, uint64_t site);
int __rsan_test_bcas_once(void *p, uint64_t e, uint64_t d, int32_t size, int32_t order, uint64_t site);
/* race detection: heap blocks, call-stack helpers (stack_helper.c) */
void rsan_sync_acquire_load(rsan_thread *t, const void *addr);
void rsan_heap_alloc(const void *p, size_t n);
void rsan_heap_free(const void *p);
typedef struct rsan_block_info {
  uintptr_t addr;
  uint64_t size;
  int tid;
  uint64_t site;
  uint64_t stack[4];
} rsan_block_info;
int rsan_heap_find(uintptr_t addr, rsan_block_info *out);
void helper_outer_write(void *p, uint64_t call_site, uint64_t site);
rsan_thread *helper_create(rsan_thread *parent, uint64_t call_site);
void helper_alloc(void *p, unsigned long n, uint64_t call_site);
"""

# the tests' short names for the ABI's numbers (passes/abi.py, read from rsan_interface.h)
ORDERS = {short: abi.ORDER_NUMBER[name] for short, name in (
    ("rlx", "relaxed"), ("con", "consume"), ("acq", "acquire"), ("rel", "release"), ("ar", "acq_rel"),
    ("sc", "seq_cst"))}
RMW_OPS = sorted(abi.RMW_OP_NUMBER, key=abi.RMW_OP_NUMBER.__getitem__)   # index = op number
KIND = {short: abi.KIND_NUMBER[name] for short, name in (
    ("ld", "load"), ("st", "store"), ("rmw", "rmw"), ("cas", "cas"), ("fence", "fence"), ("call", "call"),
    ("read", "read"), ("write", "write"))}
PREFIX = 0x9F3A12C400000000
FILE = "/abs/litmus.c"


def _compiler() -> str:
    cc = shutil.which("clang-22") or shutil.which("cc")
    if not cc:
        raise RuntimeError("no C compiler (clang-22 or cc) found")
    return cc


def build_engine_lib() -> Path:
    """Builds (once per source hash) the engine-only shared library and returns its path."""
    cc = _compiler()
    sources = sorted(p for p in SRC.glob("*.c") if not p.name.startswith("intercept_"))
    sources.append(HERE / "stack_helper.c")
    h = hashlib.sha256()
    for p in sources + sorted(SRC.glob("*.h")) + sorted(SRC.glob("*.inc")) + sorted(INC.glob("*.h")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    h.update(" ".join([cc] + CFLAGS).encode())
    outdir = Path(tempfile.gettempdir()) / f"pyrsan-engine-{h.hexdigest()[:16]}"
    out = outdir / "librsan_engine.so"
    if out.exists():
        return out
    outdir.mkdir(parents=True, exist_ok=True)
    tmp = outdir / f"librsan_engine.{os.getpid()}.so"
    cmd = [cc, *CFLAGS, *map(str, sources), "-o", str(tmp)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError("engine build failed:\n" + res.stderr)
    os.replace(tmp, out)
    return out


def load_engine():
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    lib = ffi.dlopen(str(build_engine_lib()))
    return ffi, lib


@dataclass
class RunResult:
    reports: list
    values: dict = field(default_factory=dict)  # (thread, op index) -> value returned

    def of_type(self, typ):
        return [r for r in self.reports if r["type"] == typ]


class Rsan:
    """lib.__rsan_X as rsan.X (names with two leading underscores are mangled in classes)."""

    def __init__(self, lib):
        self._lib = lib

    def __getattr__(self, name):
        return getattr(self._lib, "__rsan_" + name)


class Runtime:
    """Drives the engine: module registration, variables, threads, reports."""

    def __init__(self, ffi, lib, tmpdir: Path):
        self.ffi, self.lib, self.tmpdir = ffi, lib, Path(tmpdir)
        self.rsan = Rsan(lib)
        self.nrun = 0

    # -- state --
    def reset(self, options: str = "", reuse_module: bool = False):
        """A fresh runtime with an empty module registered. reuse_module: the same module,
        site and frame records in memory as before, emptied (a module loaded again at the
        same address): what a site id means must come from the registry, not the address."""
        ffi = self.ffi
        self.rsan.test_reset()
        self.nrun += 1
        self.json = self.tmpdir / f"reports-{self.nrun}.jsonl"
        if self.json.exists():
            self.json.unlink()
        rc = self.rsan.test_set_options(f"json_path={self.json} print_reports=0 {options}".encode())
        assert rc == 0, ffi.string(self.rsan.test_last_error()).decode()
        if not reuse_module:
            self._keep = []
            self._frames = ffi.new(f"rsan_frame[{2 * MAX_SITES}]")  # up to 2 frames a site
            self._sites = ffi.new(f"rsan_site[{MAX_SITES}]")
            self._globals = ffi.new("rsan_global[64]")
            self._mod = ffi.new("rsan_module *")
        self._mod.nsites = self._mod.nglobals = 0
        self._mod.abi_version = 1
        self._mod.id_prefix = PREFIX
        self._mod.sites = self._sites
        self._mod.globals = self._globals
        self._mod.name = self._cstr(FILE)
        self.nsites = 0
        self.vars = {}
        self.rsan.register_module(self._mod)

    def _cstr(self, s: str):
        p = self.ffi.new("char[]", s.encode())
        self._keep.append(p)
        return p

    def site(self, kind: str, line: int, function: str, order: str = "rlx", size: int = 4,
             file: str = FILE, column: int = 5, inline_of=None) -> int:
        """A new site (with an optional outer inline frame (file, line, function)); returns its id."""
        i = self.nsites
        assert i < MAX_SITES, "too many sites in one run"
        self.nsites += 1
        f = self._frames + 2 * i
        f[0].file, f[0].function = self._cstr(file), self._cstr(function)
        f[0].line, f[0].column = line, column
        n = 1
        if inline_of:
            f[1].file, f[1].function = self._cstr(inline_of[0]), self._cstr(inline_of[2])
            f[1].line, f[1].column = inline_of[1], 3
            n = 2
        s = self._sites[i]
        s.kind, s.order, s.size, s.nframes, s.frames = KIND[kind], ORDERS.get(order, 0), size, n, f
        self._mod.nsites = self.nsites
        return PREFIX | i

    def var(self, name: str, size: int = 8):
        """A zeroed 8-byte aligned variable registered as a global named name."""
        p = self.ffi.new("uint64_t[2]")
        self._keep.append(p)
        g = self._globals[len(self.vars)]
        g.addr, g.size, g.name = p, size, self._cstr(name)
        self._mod.nglobals = len(self.vars) + 1
        self.vars[name] = p
        return p

    def sb_prefix(self, writer_is_main: bool = False):
        """SB's paper run up to T2's load of x: T1 stores x (line 1) and loads y (line 2), then
        T2 stores y (line 3). writer_is_main: main stores y instead and creates T2 after it,
        so T2's first access is the load and its knowledge comes from its creation. Returns
        (x, y) with T2 the current thread."""
        lib, rsan = self.lib, self.rsan
        x, y = self.var("x"), self.var("y")
        main = rsan.test_new_thread(self.ffi.NULL)
        t1 = lib.rsan_thread_create(main)
        t2 = None if writer_is_main else lib.rsan_thread_create(main)
        rsan.test_set_current(t1)
        self.store(x, 1, site=self.site("st", 1, "t1"))
        self.load(y, site=self.site("ld", 2, "t1"))
        rsan.test_set_current(main if writer_is_main else t2)
        self.store(y, 1, site=self.site("st", 3, "main" if writer_is_main else "t2"))
        if writer_is_main:
            t2 = lib.rsan_thread_create(main)
        rsan.test_set_current(t2)
        return x, y

    def reports(self) -> list:
        if not self.json.exists():
            return []
        return [json.loads(line) for line in self.json.read_text().splitlines() if line.strip()]

    # -- operations --
    def load(self, p, order="rlx", site=0, size=4):
        return getattr(self.lib, f"__rsan_load_{size}")(p, ORDERS[order], site)

    def store(self, p, v, order="rlx", site=0, size=4):
        getattr(self.lib, f"__rsan_store_{size}")(p, v, ORDERS[order], site)

    def rmw(self, p, op, v, order="rlx", site=0, size=4):
        return getattr(self.lib, f"__rsan_rmw_{size}")(p, v, RMW_OPS.index(op), ORDERS[order], site)

    def cas(self, p, exp, des, succ="rlx", fail="rlx", weak=False, site=0, size=4):
        r = getattr(self.lib, f"__rsan_cas_{size}")(p, exp, des, ORDERS[succ], ORDERS[fail], int(weak), site)
        return r.old, r.ok

    def fence(self, order="sc", site=0):
        self.rsan.fence(ORDERS[order], 0, site)

    def atomic_op(self, mem, op, line: int, function: str):
        """One model op (("st", x, v, o), ("ld", x, o), ("rmw", x, op, v, o),
        ("cas", x, e, d, s, f, weak), ("fence", o)) on the variables mem, with a site at line in
        function; the value read, None for a store or a fence."""
        kind = op[0]
        if kind == "st":
            return self.store(mem[op[1]], op[2], op[3], self.site("st", line, function, op[3]))
        if kind == "ld":
            return self.load(mem[op[1]], op[2], self.site("ld", line, function, op[2]))
        if kind == "rmw":
            return self.rmw(mem[op[1]], op[2], op[3], op[4], self.site("rmw", line, function, op[4]))
        if kind == "cas":
            return self.cas(mem[op[1]], op[2], op[3], op[4], op[5], op[6], self.site("cas", line, function, op[4]))
        if kind == "fence":
            return self.fence(op[1], self.site("fence", line, function, op[1]))
        raise ValueError(op)

    def read(self, p, site=0, size=4):
        """A plain read of size bytes at p (race detection only)."""
        getattr(self.lib, f"__rsan_read_{size}")(p, site)

    def write(self, p, site=0, size=4):
        getattr(self.lib, f"__rsan_write_{size}")(p, site)

    def races(self) -> list:
        return [r for r in self.reports() if r["kind"] == "race"]


class Program:
    """A litmus program: one list of ops per thread, run by children of a main thread.

    ops: ("st", var, value, order) ("ld", var, order) ("rmw", var, op, value, order)
         ("cas", var, expected, desired, succ, fail, weak) ("fence", order)
         ("lock", m) ("unlock", m)   -- rsan_sync_acquire / rsan_sync_release, with mutual
                                        exclusion respected by the interleaving enumerator
    Thread k (1-based) op i gets source line 10*k + i in function "tk".
    """

    def __init__(self, *threads, prelude=()):
        self.threads = [list(t) for t in threads]
        self.prelude = list(prelude)

    def counts(self):
        return [len(t) for t in self.threads]

    def interleavings(self):
        counts = self.counts()
        acc = []

        def rec():
            if not any(counts):
                yield tuple(acc)
                return
            for i, c in enumerate(counts):
                if c:
                    counts[i] -= 1
                    acc.append(i)
                    yield from rec()
                    acc.pop()
                    counts[i] += 1

        yield from rec()

    def sequential(self):
        return tuple(i for i, t in enumerate(self.threads) for _ in t)


def line_of(thread: int, index: int) -> int:
    return 10 * thread + index


def run(rt: Runtime, prog: Program, schedule, options: str = ""):
    """Runs prog in the given interleaving (thread indices, 0-based). None if the schedule
    violates mutual exclusion of ("lock", m)."""
    rt.reset(options)
    lib = rt.lib
    names = sorted({op[1] for t in prog.threads + [prog.prelude] for op in t if op[0] != "fence"})
    mem = {n: rt.var(n) for n in names}
    main = lib.__rsan_test_new_thread(rt.ffi.NULL)
    lib.__rsan_test_set_current(main)
    holder = {}
    values = {}

    def do(k, i, op):
        kind = op[0]
        if kind == "lock":
            lib.rsan_sync_acquire(cur[0], mem[op[1]])
        elif kind == "unlock":
            lib.rsan_sync_release(cur[0], mem[op[1]])
        else:
            value = rt.atomic_op(mem, op, line_of(k, i), f"t{k}" if k else "main")
            if kind in ("ld", "rmw", "cas"):
                values[(k, i)] = value

    cur = [main]
    for i, op in enumerate(prog.prelude):
        do(0, i, op)
    threads = [lib.__rsan_test_new_thread(main) for _ in prog.threads]
    pos = [0] * len(threads)
    for k in schedule:
        op = prog.threads[k][pos[k]]
        if op[0] == "lock":
            if holder.get(op[1], k) != k:
                return None
            holder[op[1]] = k
        elif op[0] == "unlock":
            holder.pop(op[1], None)
        lib.__rsan_test_set_current(threads[k])
        cur[0] = threads[k]
        do(k + 1, pos[k], op)
        pos[k] += 1
    lib.__rsan_test_set_current(main)
    return RunResult(rt.reports(), values)


def reports_over_all(rt: Runtime, prog: Program, options: str = ""):
    """(number of interleavings run, list of (schedule, reports) with reports)."""
    n, bad = 0, []
    for sched in prog.interleavings():
        res = run(rt, prog, sched, options)
        if res is None:
            continue
        n += 1
        if res.reports:
            bad.append((sched, res.reports))
    return n, bad

"""End-to-end differential run: random straight-line litmus programs in C, each built with
`pyrsan build` and run with `pyrsan run` (the defaults) and `pyrsan run --explore`, against the
RC20 reference model's verdict (testsuite/reference/rc20.py). Where differential.py checks the
engine over all SC interleavings in-process, this checks what a user gets: the passes, the
scheduler's default sampling and exploration, and the driver's verdict.

    python benchmarks/end_to_end.py [--count 100] [--seed 1] [--max-events 24] [--non-robust]
        [--max-schedules 3000] [--shapes basic|all|locks|loops] [--fix] [--keep]

Per program: threads, events (after lowering), the model's verdict, the default's and the
exploration's exit status. Counted: false alarms (a report on a program the model calls
robust), false proofs (a complete exploration of a non-robust program without a report), the
default's misses and the exploration's misses within --max-schedules. --non-robust keeps only
programs the model calls non-robust (the misses are then the detection rate). --fix (non-robust
programs only) also runs `pyrsan fix --in-place` and reads the patched program back: the model
must call it robust (else a wrong fix). Exit status 1 when a false alarm, a false proof or a
wrong fix was found.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testsuite" / "reference"))

import rc20  # noqa: E402
from _bench import check_pyrsan, machine_load, main_guard, print_table, pyrsan_cmd, pyrsan_env, workdir  # noqa: E402

ORDERS = {"rlx": "memory_order_relaxed", "acq": "memory_order_acquire", "rel": "memory_order_release",
          "ar": "memory_order_acq_rel", "sc": "memory_order_seq_cst"}


#: (success, failure) orders of a generated compare-exchange (failure: no release, not stronger)
CAS_ORDERS = [("rlx", "rlx"), ("acq", "acq"), ("rel", "rlx"), ("ar", "acq"), ("sc", "sc"), ("sc", "rlx")]


def random_litmus(rng: random.Random, shapes: str = "basic") -> tuple[list[str], list[list[tuple]]]:
    """2-4 threads of 1-3 loads, stores, fetch_adds and fences over 2-3 locations; every
    store writes a value of its own (so a read names the write it read). ``shapes="all"`` also
    draws strong compare-exchanges and spin waits (`while (load != v) ;`, which the passes turn
    into waits). A thread waits only for a value a lower-numbered thread stores to a location
    with no other write, so every run terminates. ``shapes="locks"`` is "all" with some
    threads' operations (none of them a wait) in a critical section of one pthread mutex.
    ``shapes="loops"`` is "all" with a contiguous run of some threads' operations in a loop of
    two iterations (``("loop", body)``; ``unrolled`` is what the model sees)."""
    locations = ["x", "y", "z"][:rng.choice([2, 2, 3])]
    threads, value = [], 1
    kinds = ["st", "st", "ld", "ld", "rmw", "fence"] + (["cas", "wait"] if shapes != "basic" else [])
    for _ in range(rng.choice([2, 2, 3, 3, 4])):
        ops: list[tuple] = []
        for _ in range(rng.choice([1, 2, 2, 3])):
            kind, x = rng.choice(kinds), rng.choice(locations)
            if kind == "st":
                ops.append(("st", x, value, rng.choice(["rlx", "rlx", "rel", "sc"])))
                value += 1
            elif kind == "ld":
                ops.append(("ld", x, rng.choice(["rlx", "rlx", "acq", "sc"])))
            elif kind == "rmw":
                ops.append(("rmw", x, "add", 1, rng.choice(["rlx", "acq", "rel", "ar", "sc"])))
            elif kind == "cas":
                success, failure = rng.choice(CAS_ORDERS)
                ops.append(("cas", x, rng.choice([0, 1]), value, success, failure, False))
                value += 1
            elif kind == "wait":
                ops.append(("wait", x, 0, rng.choice(["rlx", "acq", "sc"])))   # the value is chosen below
            else:
                ops.append(("fence", rng.choice(["sc", "sc", "acq", "rel", "ar"])))
        threads.append(ops)
    threads = _waits_that_end(threads)
    if shapes == "locks":
        return locations, [_critical_section(rng, ops) for ops in threads]
    if shapes == "loops":
        waited = {op[1] for ops in threads for op in ops if op[0] == "wait"}
        return locations, [_loop(rng, ops, waited) for ops in threads]
    return locations, threads


#: The mutex of shapes="locks", a location of the model: pthread_mutex_lock is an acquire RMW
#: that waits for the unlocked value 0 and pthread_mutex_unlock a release store of 0, as the
#: runtime models them (sync.c; architecture.md "Decisions and pitfalls").
MUTEX = "m"
LOCK = ("bcas", MUTEX, 0, 1, "acq")
UNLOCK = ("st", MUTEX, 0, "rel")


def _critical_section(rng: random.Random, ops: list[tuple]) -> list[tuple]:
    """Half of the threads put a contiguous run of their operations in a critical section. It
    holds no wait: a thread waiting inside one for a thread that needs the mutex would deadlock."""
    if rng.random() < 0.5:
        return ops
    i = rng.randrange(len(ops))
    j = rng.randrange(i, len(ops)) + 1
    if any(op[0] == "wait" for op in ops[i:j]):
        return ops
    return ops[:i] + [LOCK] + ops[i:j] + [UNLOCK] + ops[j:]


#: The iterations of a generated loop, and what a store or compare-exchange in iteration i adds
#: to its value (so each write still has a value of its own; generated values stay below it).
#: The bound is a global the compiler cannot fold, so the loop stays a loop in the IR.
LOOP_ITERATIONS, LOOP_STRIDE = 2, 1000


def _loop(rng: random.Random, ops: list[tuple], waited: set[str]) -> list[tuple]:
    """Half of the threads put a contiguous run of their operations in a loop. It holds no
    wait, and writes no location that a thread waits on (a wait for one value of a location
    written twice could miss it and spin forever)."""
    if rng.random() < 0.5:
        return ops
    i = rng.randrange(len(ops))
    j = rng.randrange(i, len(ops)) + 1
    body = ops[i:j]
    if any(op[0] == "wait" or (op[0] in ("st", "rmw", "cas") and op[1] in waited) for op in body):
        return ops
    return ops[:i] + [("loop", body)] + ops[j:]


def _iteration(op: tuple, i: int) -> tuple:
    if op[0] == "st":
        return (op[0], op[1], op[2] + LOOP_STRIDE * i, *op[3:])
    if op[0] == "cas":
        return (*op[:3], op[3] + LOOP_STRIDE * i, *op[4:])
    return op


def unrolled(ops: list[tuple]) -> list[tuple]:
    """A thread's operations as the model sees them: each loop unrolled."""
    out: list[tuple] = []
    for op in ops:
        if op[0] == "loop":
            out += [_iteration(o, i) for i in range(LOOP_ITERATIONS) for o in op[1]]
        else:
            out.append(op)
    return out


def _waits_that_end(threads: list[list[tuple]]) -> list[list[tuple]]:
    """Each wait gets the value of the only write to its location by a lower-numbered thread,
    or is dropped when there is none."""
    writes: dict[str, list[tuple[int, int]]] = {}
    for k, ops in enumerate(threads):
        for op in ops:
            if op[0] in ("st", "rmw", "cas"):
                writes.setdefault(op[1], []).append((k, op[2] if op[0] == "st" else -1))
    out = []
    for k, ops in enumerate(threads):
        kept = []
        for op in ops:
            if op[0] == "wait":
                only = writes.get(op[1], [])
                if len(only) != 1 or only[0][0] >= k or only[0][1] < 0:
                    continue
                op = ("wait", op[1], only[0][1], op[3])
            kept.append(op)
        out.append(kept or [("fence", "rel")])
    return out


def c_main(n: int, reads: int) -> list[str]:
    """`main` of a generated program: start threads t0..t{n-1}, join them, print r0..r{reads-1}."""
    return ["int main(void) {", f"  pthread_t th[{n}];",
            f"  void *(*fn[{n}])(void *) = {{{', '.join(f't{k}' for k in range(n))}}};",
            f"  for (int i = 0; i < {n}; i++)", "    pthread_create(&th[i], NULL, fn[i], NULL);",
            f"  for (int i = 0; i < {n}; i++)", "    pthread_join(th[i], NULL);",
            f'  printf("{" ".join(["%d"] * reads)}\\n", {", ".join(f"r{i}" for i in range(reads))});',
            "  return 0;", "}"]


def _flat(ops: list[tuple]) -> list[tuple]:
    """Each operation once, loop bodies in place (the statements of the source)."""
    return [o for op in ops for o in (op[1] if op[0] == "loop" else [op])]


def c_source(locations: list[str], threads: list[list[tuple]]) -> str:
    reads = sum(1 for ops in threads for op in _flat(ops) if op[0] in ("ld", "rmw", "cas")) or 1
    out = ["#include <pthread.h>", "#include <stdatomic.h>", "#include <stdio.h>", "",
           f"atomic_int {', '.join(locations)};", f"int {', '.join(f'r{i}' for i in range(reads))};",
           f"pthread_mutex_t {MUTEX} = PTHREAD_MUTEX_INITIALIZER;",
           f"int loops = {LOOP_ITERATIONS};   /* a loop's bound, not a constant of the compiler */", ""]
    r = 0

    def statements(ops: list[tuple], pad: str, stride: str) -> None:
        nonlocal r, out
        for op in ops:
            if op == LOCK:
                out.append(f"{pad}pthread_mutex_lock(&{MUTEX});")
            elif op == UNLOCK:
                out.append(f"{pad}pthread_mutex_unlock(&{MUTEX});")
            elif op[0] == "loop":
                out.append(f"{pad}for (int i = 0; i < loops; i++) {{")
                statements(op[1], pad + "  ", f" + {LOOP_STRIDE} * i")
                out.append(f"{pad}}}   /* loop */")
            elif op[0] == "st":
                out.append(f"{pad}atomic_store_explicit(&{op[1]}, {op[2]}{stride}, {ORDERS[op[3]]});")
            elif op[0] == "ld":
                out.append(f"{pad}r{r} = atomic_load_explicit(&{op[1]}, {ORDERS[op[2]]});")
                r += 1
            elif op[0] == "rmw":
                out.append(f"{pad}r{r} = atomic_fetch_add_explicit(&{op[1]}, {op[3]}, {ORDERS[op[4]]});")
                r += 1
            elif op[0] == "cas":
                out += [f"{pad}e = {op[2]};", f"{pad}r{r} = atomic_compare_exchange_strong_explicit(&{op[1]}, &e, "
                        f"{op[3]}{stride}, {ORDERS[op[4]]}, {ORDERS[op[5]]});"]
                r += 1
            elif op[0] == "wait":
                out += [f"{pad}while (atomic_load_explicit(&{op[1]}, {ORDERS[op[3]]}) != {op[2]})", f"{pad}  ;"]
            else:
                out.append(f"{pad}atomic_thread_fence({ORDERS[op[1]]});")

    for k, ops in enumerate(threads):
        out += [f"static void *t{k}(void *arg) {{", "  (void)arg;"]
        if any(op[0] == "cas" for op in _flat(ops)):
            out.append("  int e;   /* a compare-exchange's expected value, one statement per line */")
        statements(ops, "  ", "")
        out += ["  return NULL;", "}", ""]
    return "\n".join(out + c_main(len(threads), reads)) + "\n"


_NAMES = {v: k for k, v in ORDERS.items()}
_LINE = re.compile(r"""
    pthread_mutex_(?P<mutex>lock|unlock)\(&\w+\)
  | for\ \(int\ i\ =\ 0;\ i\ <\ loops;\ i\+\+\)\ \{(?P<loop>)
  | ^\ *\}\ +/\*\ loop\ \*/(?P<endloop>)
  | atomic_store_explicit\(&(?P<st>\w+),\ (?P<stv>-?\d+)(?:\ \+\ \d+\ \*\ i)?,\ (?P<sto>\w+)\)
  | atomic_load_explicit\(&(?P<ld>\w+),\ (?P<ldo>\w+)\)\ !=\ (?P<wait>-?\d+)
  | atomic_load_explicit\(&(?P<ld2>\w+),\ (?P<ld2o>\w+)\)
  | atomic_fetch_add_explicit\(&(?P<rmw>\w+),\ (?P<rmwv>-?\d+),\ (?P<rmwo>\w+)\)
  | ^\ +e\ =\ (?P<exp>-?\d+);
  | compare_exchange_strong_explicit\(&(?P<cas>\w+),\ &e,\ (?P<des>-?\d+)(?:\ \+\ \d+\ \*\ i)?,
      \ (?P<succ>\w+),\ (?P<fail>\w+)\)
  | atomic_thread_fence\((?P<fence>\w+)\)
""", re.VERBOSE)


def ops_of_source(text: str) -> list[list[tuple]]:
    """The threads of a program c_source wrote, read back from its text (after `pyrsan fix`
    changed orders or added fences): the inverse of c_source."""
    threads: list[list[tuple]] = []
    expected = 0
    ops: list[tuple] = []   # where the next operation goes: its thread's, or a loop's body
    for line in text.splitlines():
        if re.match(r"static void \*t\d+\(void \*arg\) \{", line):
            threads.append([])
            ops = threads[-1]
            continue
        m = _LINE.search(line)
        if m is None or not threads:
            continue
        g = m.groupdict()
        if g["loop"] is not None:
            ops = []
            threads[-1].append(("loop", ops))
        elif g["endloop"] is not None:
            ops = threads[-1]
        elif g["exp"]:
            expected = int(g["exp"])
        elif g["mutex"]:
            ops.append(LOCK if g["mutex"] == "lock" else UNLOCK)
        elif g["st"]:
            ops.append(("st", g["st"], int(g["stv"]), _NAMES[g["sto"]]))
        elif g["ld"]:
            ops.append(("wait", g["ld"], int(g["wait"]), _NAMES[g["ldo"]]))
        elif g["ld2"]:
            ops.append(("ld", g["ld2"], _NAMES[g["ld2o"]]))
        elif g["rmw"]:
            ops.append(("rmw", g["rmw"], "add", int(g["rmwv"]), _NAMES[g["rmwo"]]))
        elif g["cas"]:
            ops.append(("cas", g["cas"], expected, int(g["des"]), _NAMES[g["succ"]],
                        _NAMES[g["fail"]], False))
        else:
            ops.append(("fence", _NAMES[g["fence"]]))
    return threads


def pyrsan_run(executable: Path, json_path: Path, *extra: str) -> tuple[int, dict]:
    proc = subprocess.run(pyrsan_cmd("run", *extra, "--json", str(json_path), str(executable)), env=pyrsan_env(),
                          capture_output=True, text=True, timeout=600, cwd=executable.parent)
    document = json.loads(json_path.read_text()) if json_path.exists() else {}
    return proc.returncode, document


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-events", type=int, default=24, help="skip programs with more events after lowering")
    ap.add_argument("--non-robust", action="store_true", help="keep only programs the model calls non-robust")
    ap.add_argument("--max-schedules", type=int, default=3000)
    ap.add_argument("--shapes", choices=("basic", "all", "locks", "loops"), default="basic",
                    help="all: also strong compare-exchanges and spin waits; locks: all, and critical "
                         "sections; loops: all, and loops of two iterations")
    ap.add_argument("--fix", action="store_true",
                    help="non-robust programs only: also run `pyrsan fix --in-place` and check the patched "
                         "program with the model")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    args.non_robust |= args.fix
    check_pyrsan()
    tmp = workdir(args.keep, "pyrsan-e2e-")
    print(f"load average at start: {machine_load()}")
    rows, counts = [], {"programs": 0, "non-robust": 0, "false alarms": 0, "false proofs": 0,
                        "default misses": 0, "exploration misses": 0}
    if args.fix:
        counts |= {"fixed": 0, "fixed (proved)": 0, "not fixed": 0, "manual steps": 0,
                   "wrong fixes": 0, "fix unchecked": 0}
    start = time.monotonic()
    seed = args.seed
    while counts["programs"] < args.count:
        seed += 1
        locations, threads = random_litmus(random.Random(seed), args.shapes)
        model = [unrolled(ops) for ops in threads]
        events = sum(len(rc20.expand_thread(ops)) for ops in model)
        if events > args.max_events:
            continue
        robust = rc20.robust(model)
        if args.non_robust and robust:
            continue
        source = tmp / f"p{seed}.c"
        source.write_text(c_source(locations, threads))
        executable = tmp / f"p{seed}"
        subprocess.run(pyrsan_cmd("build", "-o", str(executable), str(source)), env=pyrsan_env(), check=True,
                       capture_output=True, timeout=300)
        default, _ = pyrsan_run(executable, tmp / f"p{seed}.default.json")
        explored, document = pyrsan_run(executable, tmp / f"p{seed}.explore.json", "--explore",
                                        "--max-schedules", str(args.max_schedules))
        complete = bool(document.get("exploration", {}).get("complete"))
        problems = []
        if robust and 66 in (default, explored):
            problems.append("FALSE ALARM")
        if not robust and default != 66:
            problems.append("default miss")
        if not robust and explored != 66:
            problems.append("FALSE PROOF" if complete else "exploration miss")
        if {default, explored} - {0, 66}:
            problems.append(f"exit status {default}/{explored}")
        if args.fix:
            problems += check_fix(source, tmp, counts)
        counts["programs"] += 1
        counts["non-robust"] += not robust
        counts["false alarms"] += "FALSE ALARM" in problems
        counts["false proofs"] += "FALSE PROOF" in problems
        counts["default misses"] += "default miss" in problems
        counts["exploration misses"] += "exploration miss" in problems
        if problems:
            rows.append([f"p{seed}", str(len(threads)), str(events), "robust" if robust else "not robust",
                         str(default), str(explored), ", ".join(problems)])
            print(f"p{seed}: {', '.join(problems)}: {threads}", flush=True)
    print()
    if rows:
        print_table(["program", "threads", "events", "model", "default", "explore", "problem"], rows)
    print(", ".join(f"{k}: {v}" for k, v in counts.items()) + f" ({time.monotonic() - start:.0f} s)")
    print(f"load average at end: {machine_load()}")
    return 1 if counts["false alarms"] or counts["false proofs"] or counts.get("wrong fixes") else 0


def check_fix(source: Path, tmp: Path, counts: dict[str, int]) -> list[str]:
    """`pyrsan fix --in-place` on a non-robust program; a program it calls fixed is read back
    (ops_of_source) and must be robust for the model: else a WRONG FIX (if the fix's check was
    a complete exploration, a false proof of the patched program)."""
    json_path = source.with_suffix(".fix.json")
    proc = subprocess.run(pyrsan_cmd("fix", "--in-place", "--json", str(json_path), str(source)), env=pyrsan_env(),
                          capture_output=True, text=True, timeout=1200, cwd=tmp)
    document = json.loads(json_path.read_text()) if json_path.exists() else {}
    if proc.returncode == 66 or document.get("verdict") == "not_fixed":
        counts["not fixed"] += 1
        return ["not fixed"]
    if proc.returncode != 0 or document.get("verdict") != "fixed":
        return [f"fix exit status {proc.returncode}"]
    counts["fixed"] += 1
    if document.get("patched_check") is None:   # manual steps: the source was not patched in full
        counts["manual steps"] += 1
        return ["manual steps: " + "; ".join(r["manual"]["instruction"] for r in document.get("repairs", [])
                                             if "manual" in r)]
    proved = bool(document["patched_check"].get("complete"))
    counts["fixed (proved)"] += proved
    try:
        if rc20.robust([unrolled(ops) for ops in ops_of_source(source.read_text())]):
            return []
    except RuntimeError as error:   # the patched program is beyond the model's enumeration
        counts["fix unchecked"] += 1
        return [f"fix unchecked: {error}"]
    counts["wrong fixes"] += 1
    return ["WRONG FIX" + (" (proved)" if proved else " (sampled)")]


if __name__ == "__main__":
    main_guard(main)

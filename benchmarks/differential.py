"""Long differential run: the runtime's verdict over all SC interleavings against the
reference model of RC20 robustness, on many random programs (the CI test runs 150).

    python benchmarks/differential.py [--count 3000] [--seed 1] [--max-events 8]
        [--sc-budget 4] [--strong] [--blocking] [--no-spurious] [--graph-limit 300000]
        [--threads N] [--locations M]

--threads 4 --locations 64 --count 5000 --max-events 10: the engine-scaling run of issue 11
(many distinct locations per program, most ops on two hot ones so that threads interact).

Prints the number of programs checked, the time taken, and every disagreement (program,
sc_accesses mode, both verdicts, the model's witness graph or the runtime's schedule).
--strong generates strong CAS instead of weak (checked exactly since value tracking: any
disagreement is a failure). --blocking also generates wait and BCAS annotations.
--no-spurious explores only SC
runs in which no weak CAS fails spuriously. Exit status 1 when a disagreement was found.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testsuite" / "reference"))

import rc20  # noqa: E402
from explore import Engine  # noqa: E402
from programs import random_program, show  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=3000, help="programs to check (default 3000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-events", type=int, default=8, help="ops per program, at most")
    ap.add_argument("--sc-budget", type=int, default=4,
                    help="at most this many RMWs on the SC-fence location F per program")
    ap.add_argument("--strong", action="store_true", help="strong CAS instead of weak")
    ap.add_argument("--blocking", action="store_true", help="also generate wait and BCAS")
    ap.add_argument("--no-spurious", action="store_true",
                    help="do not explore spurious failures of weak CAS in the runtime")
    ap.add_argument("--graph-limit", type=int, default=300_000,
                    help="skip a program whose model search exceeds this many graphs")
    ap.add_argument("--threads", type=int, default=0,
                    help="threads per program (default: 2-4 at random)")
    ap.add_argument("--locations", type=int, default=0,
                    help="draw variables from this many locations (<= 64; default 1-3)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    a = ap.parse_args(argv)
    if a.count < 1 or a.max_events < 2 or not 0 <= a.threads <= 8 or not 0 <= a.locations <= 64:
        print("error: --count must be >= 1, --max-events >= 2, --threads <= 8, --locations <= 64",
              file=sys.stderr)
        return 2

    rng = random.Random(a.seed)
    eng = Engine()
    t0 = time.time()
    t_model = t_rt = 0.0
    checked = skipped = nonrobust = runs = graphs = 0
    over = []   # runtime reports, model proves robust
    miss = []   # model finds a violation, runtime never reports
    for i in range(a.count):
        sc = rng.choice(("fenced", "ra"))
        prog = random_program(rng, max_events=a.max_events, weak=not a.strong, sc=sc,
                              sc_budget=a.sc_budget, blocking=a.blocking, threads=a.threads,
                              locations=a.locations)
        t = time.time()
        try:
            model = rc20.Enumerator(prog, sc, limit=a.graph_limit).run()
        except RuntimeError:
            skipped += 1
            continue
        t_model += time.time() - t
        t = time.time()
        rt = eng.verdict(prog, sc, spurious=not a.no_spurious)
        t_rt += time.time() - t
        checked += 1
        graphs += model.graphs
        runs += rt.runs
        nonrobust += not model.robust
        if rt.robust != model.robust:
            (over if model.robust else miss).append((prog, sc, model, rt))
            kind = "OVER-REPORT" if model.robust else "MISS"
            print(f"{kind} (sc_accesses={sc}): model robust={model.robust}, "
                  f"runtime robust={rt.robust}\n{show(prog)}")
            if model.witness:
                print(f"  model witness: {model.witness}")
            if rt.schedule:
                print(f"  runtime schedule: {rt.schedule}")
            sys.stdout.flush()
        if not a.quiet and (i + 1) % 500 == 0:
            print(f"... {i + 1} generated, {time.time() - t0:.0f}s", flush=True)
    el = time.time() - t0
    print(f"checked {checked} programs ({nonrobust} not robust, {skipped} skipped over "
          f"{a.graph_limit} graphs) in {el:.1f}s: model {t_model:.1f}s ({graphs} graphs), "
          f"runtime {t_rt:.1f}s ({runs} runs)")
    print(f"disagreements: {len(miss)} runtime misses, {len(over)} runtime over-reports")
    bad = len(miss) + len(over)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

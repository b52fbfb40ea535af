"""The robustness monitor's rules on location clocks, in Python, for checking the explorer's
dependency relation on programs too big for the engine's brute force (test_dpor_monitor.py).

The rules are algorithm.md §3 with architecture.md's decisions, as testsuite/runtime/
test_model.py transcribes them (that file checks its transcription against the engine), here
on tuples so that states can be hashed: the reports of *every* interleaving of a straight-line
program are then found by a search that visits each state once, instead of running each of
the (often 10^5-10^6) interleavings. test_dpor_monitor.py checks this module against the
engine on the named programs and random ones, so it cannot drift from the runtime unseen.

Programs are split_fenced(...) lists (testsuite/reference/explore.py): loads, stores, RMWs
and fences, each seq_cst access already three steps. A report is (kind, thread index, step
index within the thread's split list). Locations are clocks' components; the last one is F.
"""

from __future__ import annotations

from typing import Callable

ACQ = frozenset({"con", "acq", "ar", "sc"})
REL = frozenset({"rel", "ar", "sc"})
# thread clocks: Tc Ta Tr Tsc, then their U twins; location: W WU Wsc Msc WscU MscU stamp stampU
TC, TA, TR, TSC, TCU, TAU, TRU, TSCU = range(8)
W, WU, WSC, MSC, WSCU, MSCU, STAMP, STAMPU = range(8)

Clock = tuple[int, ...]


def _join(a: Clock, b: Clock) -> Clock:
    return tuple(x if x >= y else y for x, y in zip(a, b))


def _raise(c: Clock, i: int, v: int) -> Clock:
    if c[i] >= v:
        return c
    out = list(c)
    out[i] = v
    return tuple(out)


def locations(split) -> list[str]:
    return sorted({op[1] for ops in split for op in ops if op[0] != "fence"})


class Monitor:
    """The monitor state of one run: thread and location clocks, and what each thread's
    previous SC fence left in its Ta and Tsc (the clean-fence label, sched_fence.c)."""

    def __init__(self, split) -> None:
        self.split = split
        self.index = {name: i for i, name in enumerate(locations(split))}
        n = len(self.index) + 1
        zero: Clock = (0,) * n
        self.f = n - 1
        self.threads = [[zero] * 8 for _ in split]
        self.locs: list[list] = [[zero] * 6 + [0, 0] for _ in range(n)]
        self.after_fence: list[tuple[Clock, Clock] | None] = [None] * len(split)
        self.pos = [0] * len(split)
        self.reports: set = set()

    def key(self) -> tuple:
        return (tuple(self.pos), tuple(map(tuple, self.threads)), tuple(map(tuple, self.locs)),
                tuple(self.after_fence))

    def clean(self, t: int) -> bool:
        """The runtime's label of thread t's pending SC fence: Ta and Tsc unchanged since its
        previous SC fence."""
        last = self.after_fence[t]
        th = self.threads[t]
        return last is not None and th[TA] == last[0] and th[TSC] == last[1]

    def _sc_write(self, th: list, x: list, i: int, ts: int, tsu: int) -> None:
        x[MSC] = _raise(x[MSC], i, ts)
        th[TSC] = _join(th[TSC], x[MSC])
        x[WSC] = x[MSC] = th[TSC]
        if tsu:
            x[MSCU] = _raise(x[MSCU], i, tsu)
        th[TSCU] = _join(th[TSCU], x[MSCU])
        x[WSCU] = x[MSCU] = th[TSCU]

    def _hb_rmw(self, th: list, x: list, i: int, mo: str, ts: int) -> None:
        x[W] = _raise(x[W], i, ts)
        th[TA] = _raise(th[TA], i, ts)
        th[TC] = _raise(th[TC], i, ts)
        th[TA] = _join(th[TA], x[W])
        th[TAU] = _join(th[TAU], x[WU])
        if mo in ACQ:
            th[TC] = _join(th[TC], x[W])
            th[TCU] = _join(th[TCU], x[WU])
        else:
            th[TCU] = _raise(th[TCU], i, x[WU][i])
        if mo in REL:
            x[W] = _join(x[W], th[TC])
            x[WU] = _join(x[WU], th[TCU])
        else:
            x[W] = _join(x[W], th[TR])
            x[WU] = _join(x[WU], th[TRU])

    def _fence(self, t: int, mo: str) -> None:
        th = self.threads[t]
        if mo in ("acq", "ar", "sc"):
            th[TC], th[TCU] = th[TA], th[TAU]
        if mo == "sc":
            f = self.locs[self.f]
            f[STAMP] += 1
            self._sc_write(th, f, self.f, f[STAMP], 0)
            self._hb_rmw(th, f, self.f, "ar", f[STAMP])
            self.after_fence[t] = (th[TA], th[TSC])
        if mo in ("rel", "ar", "sc"):
            th[TR], th[TRU] = th[TC], th[TCU]

    def step(self, t: int) -> None:
        op = self.split[t][self.pos[t]]
        th = self.threads[t]
        if op[0] == "fence":
            self._fence(t, op[1])
        else:
            i = self.index[op[1]]
            x = self.locs[i]
            if op[0] == "ld":
                if th[TSC][i] > th[TC][i]:
                    self.reports.add(("read", t, self.pos[t]))
                x[MSC] = _join(x[MSC], th[TSC])
                th[TSC] = _join(th[TSC], x[WSC])
                x[MSCU] = _join(x[MSCU], th[TSCU])
                th[TSCU] = _join(th[TSCU], x[WSCU])
                th[TA] = _join(th[TA], x[W])
                th[TAU] = _join(th[TAU], x[WU])
                if op[2] in ACQ:
                    th[TC] = _join(th[TC], x[W])
                    th[TCU] = _join(th[TCU], x[WU])
                else:
                    th[TC] = _raise(th[TC], i, x[W][i])
                    th[TCU] = _raise(th[TCU], i, x[WU][i])
            elif op[0] == "st":
                if th[TSCU][i] > th[TCU][i]:
                    self.reports.add(("write", t, self.pos[t]))
                x[STAMP] += 1
                x[STAMPU] += 1
                ts, tsu = x[STAMP], x[STAMPU]
                self._sc_write(th, x, i, ts, tsu)
                for c, v in ((TA, ts), (TC, ts), (TAU, tsu), (TCU, tsu)):
                    th[c] = _raise(th[c], i, v)
                if op[3] in REL:
                    x[W], x[WU] = th[TC], th[TCU]
                else:
                    x[W], x[WU] = _raise(th[TR], i, ts), _raise(th[TRU], i, tsu)
            elif op[0] == "rmw":
                if th[TSCU][i] > th[TCU][i]:
                    self.reports.add(("write", t, self.pos[t]))
                x[STAMP] += 1
                self._sc_write(th, x, i, x[STAMP], 0)
                self._hb_rmw(th, x, i, op[4], x[STAMP])
            else:
                raise ValueError(f"lc_model: unsupported step {op!r}")
        self.pos[t] += 1


def run(split, decisions) -> Monitor:
    monitor = Monitor(split)
    for t in decisions:
        monitor.step(t)
    return monitor


def all_reports(split) -> tuple[frozenset, int]:
    """The reports over every interleaving, and the number of distinct states: a depth-first
    search that expands each monitor state once (the future of a state depends on it alone)."""
    seen: set = set()
    found: set = set()
    stack: list[tuple[int, ...]] = [()]
    while stack:
        prefix = stack.pop()
        monitor = run(split, prefix)
        found |= monitor.reports
        key = monitor.key()
        if key in seen:
            continue
        seen.add(key)
        stack.extend(prefix + (t,) for t in range(len(split)) if monitor.pos[t] < len(split[t]))
    return frozenset(found), len(seen)


def clean_labels(split) -> Callable[[tuple[int, ...]], frozenset]:
    """The runtime's clean-fence labels after a sequence of steps (program_model.simulate's
    ``clean``)."""
    memo: dict = {}

    def clean(done: tuple[int, ...]) -> frozenset:
        if done not in memo:
            monitor = run(split, done)
            memo[done] = frozenset(t for t, ops in enumerate(split) if monitor.pos[t] < len(ops)
                                   and ops[monitor.pos[t]] == ("fence", "sc") and monitor.clean(t))
        return memo[done]
    return clean


# --- The F-order closure of a run (issue 15) ---------------------------------------------------
#
# A run's *coarse* class: the interleavings that order every two conflicting accesses of a real
# location (same location, one writes) as the run does, with SC fences ordered by nothing but
# their thread. Its interleavings execute the same steps with the same values (an SC fence reads
# and writes no program memory, so no load's value, no CAS outcome, no control flow depends on
# the fences' order); they differ only in the order of the SC fences in F, and the monitor's
# verdict can depend on that order (docs/scheduling.md "SC fences: when two commute"). The
# closure is every report of every interleaving of the class. An explorer whose relation makes
# every two SC fences independent runs one interleaving per coarse class at least; with the
# closure of each run in place of the run's own reports it misses no report of any
# interleaving, and every report it finds is the engine's report of one real interleaving
# (class_witness names one, which the driver can run as a schedule).


def coarse_predecessors(split, decisions) -> list[list[tuple[int, ...]]]:
    """For each thread's k-th step, how many steps of each thread must run before it in every
    interleaving of the run's coarse class: the run's conflicting accesses of a real location
    (po is the thread's own order)."""
    n = len(split)
    need = [[(0,) * n for _ in ops] for ops in split]
    pos = [0] * n
    events: list[tuple[int, int]] = []
    for t in decisions:
        op = split[t][pos[t]]
        req = [0] * n
        if op[0] != "fence":
            for u, k in events:
                if u == t:
                    continue
                other = split[u][k]
                if other[0] != "fence" and other[1] == op[1] and (op[0] != "ld" or other[0] != "ld"):
                    req[u] = max(req[u], k + 1)
        need[t][pos[t]] = tuple(req)
        events.append((t, pos[t]))
        pos[t] += 1
    return need


def closure_key(monitor: Monitor) -> tuple:
    """The part of the state a later step can read: without F's component of every clock (F's
    stamps are never checked, and a join is per component, so they reach no other component)
    and without the clocks of threads that have ended (no step reads them again: what they
    wrote is in the locations). Two states with one key make the same future reports."""
    f = monitor.f
    threads = tuple(None if monitor.pos[t] == len(ops) else tuple(c[:f] for c in monitor.threads[t])
                    for t, ops in enumerate(monitor.split))
    locs = tuple(tuple(c[:f] if isinstance(c, tuple) else c for c in loc) for loc in monitor.locs[:f])
    return (tuple(monitor.pos), threads, locs)


def class_reports(split, decisions) -> tuple[frozenset, int]:
    """The reports of every interleaving of the run's coarse class (its F-order closure), and
    the monitor states expanded: a search that expands each state once, stepping a thread only
    when its step's coarse predecessors have run."""
    need = coarse_predecessors(split, decisions)
    seen: set = set()
    found: set = set()
    stack: list[tuple[int, ...]] = [()]
    while stack:
        prefix = stack.pop()
        monitor = run(split, prefix)
        found |= monitor.reports
        key = closure_key(monitor)
        if key in seen:
            continue
        seen.add(key)
        ready = [t for t, ops in enumerate(split) if monitor.pos[t] < len(ops)
                 and all(monitor.pos[u] >= c for u, c in enumerate(need[t][monitor.pos[t]]))]
        # A ready step that is not an SC fence commutes with every other ready step (two
        # conflicting accesses are never ready together: one is the other's predecessor), on
        # the monitor state too (it touches its thread's and its location's clocks, an SC fence
        # its thread's and F's): running it first loses no state's reports. Only the fences'
        # order branches.
        access = [t for t in ready if split[t][monitor.pos[t]] != ("fence", "sc")]
        stack.extend(prefix + (t,) for t in (access[:1] or ready))
    return frozenset(found), len(seen)

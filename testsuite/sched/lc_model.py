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

"""Stateless exploration of the SC interleavings of a program: dynamic partial-order
reduction (Flanagan & Godefroid, POPL'05) with sleep sets, computed from traces.

Each run re-executes the program from the start with a schedule prefix (``sched=dfs
schedule=<prefix>``); after the prefix the runtime keeps running the same thread while it
can (docs/scheduling.md, "Default continuation"). The run's trace lists, at every scheduling
point, the pending operation of every enabled thread. From it the explorer finds the pairs of
dependent operations of different threads that are not ordered by happens-before (races,
docs/scheduling.md "Trace file": dependent operations) and adds the later thread to the backtrack set of the
state before the earlier operation, so that the next runs reverse each race. Sleep sets keep
it from re-running an order equivalent to one already run. When the runs go one at a time
and no preemption bound applies, the search is optimal DPOR (Abdulla et al., JACM 2017): a
reversal inserts its whole sequence into a wakeup tree at the state before the race, unless a
thread asleep or done there is a weak initial of it, and a run follows the sequence before the
continuation takes over, so no class runs twice and (measured on the sched programs, not a theorem when threads wait)
no run is cut as sleep-blocked (docs/design/exploration.md §21). When the search ends without
hitting a bound, every Mazurkiewicz trace class of the program's SC executions has been run
once at least, which with Thm 3.1 of the RSAN paper (robust iff no SC run has a violation)
makes "no report" a proof for this input.

The core is independent of the runtime: ``explore`` takes a function that runs one prefix
and returns its trace (tests drive it with a simulated program).
"""

from __future__ import annotations

import gc
import threading
from itertools import compress
from operator import attrgetter, methodcaller
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .explore_waits import note_spawn
from .schedule import Op, Prefix, Step, Trace

#: Operations whose address field names a thread, not memory.
THREAD_KINDS = frozenset({"spawn", "join", "exit"})
#: The end of the process (exit, or a return from main), while other threads may still run: it
#: ends them all, so it is dependent with every operation of another thread.
PROCESS_EXIT = "exit_process"
#: The address a trace names for a *clean* SC fence: its thread's Ta and Tsc hold nothing its
#: previous SC fence did not leave there (runtime/src/sched_fence.c), so it releases nothing new
#: into F, and two clean fences of different threads commute (docs/scheduling.md, "SC fences:
#: when two commute"). Other SC fences are "0x0".
CLEAN_FENCE = "0x1"
#: Operations that wait for another thread (a lock held, a thread not ended, a wait for a
#: write): one whose thread could not run before an operation it depends on cannot be moved
#: before it (the two are never co-enabled, FG'05 §3).
BLOCKING_KINDS = frozenset({"lock", "sync_acquire", "join", "wait", "await"})
#: The step a thread in an await loop takes after its iterations repeated themselves
#: (runtime/src/sched_await.c): it waits for a write to one of the words its last iteration
#: read, named in its address as "0xA+0xB+..."; it does nothing itself, so it is dependent
#: only with the writes of those words (docs/design/exploration.md §7).
AWAIT = "await"
#: How many times in a row a search may run a thread while it yields (docs/scheduling.md,
#: "Yielding threads in an exploration"): each such run is a step the runtime's continuation
#: would not take. A loop that re-reads unchanged memory without end would make the race
#: reversals into it endless; past this many, the search stops reversing into it and is bounded.
YIELD_RUNS = 8
#: The same backstop for a *counting* yielding thread (the runtime lists it under "counting": its
#: loop's header state has not come back, so each repeat changes what the loop counts). Its
#: repeats are reversed like news, and the program's own bound (the loop ends when its count
#: does) ends the reversals; a loop that counts without end meets this bound instead (no proof).
COUNT_RUNS = 64


def await_words(op: Op) -> frozenset[int]:
    """The 8-byte words an await step waits on (the runtime wakes it by word)."""
    return frozenset(int(a, 16) >> 3 for a in op.addr.split("+") if a)


def _wakes(op: Op, other: Op) -> bool:
    """``other`` writes a word the await step ``op`` waits on."""
    if not other.writes or other.kind in THREAD_KINDS or other.kind in ("fence", "fence_sc", AWAIT):
        return False
    try:
        return int(other.addr, 16) >> 3 in await_words(op)
    except ValueError:
        return False


def dependent(tid_a: int, a: Op, tid_b: int, b: Op) -> bool:
    """docs/scheduling.md, "Trace file": different threads and (one is the process exit, or
    same address with a write, or both SC fences and not both clean, or a spawn/join/exit
    involving the other thread). Non-SC fences are independent of everything but the process
    exit."""
    if tid_a == tid_b:
        return False
    kind_a, kind_b = a.kind, b.kind
    # the two commonest cases first, as the rules below decide them
    if kind_a in ACCESS_KINDS and kind_b in ACCESS_KINDS:
        return a.addr == b.addr and a.addr != "0x0" and (a.writes or b.writes)
    if kind_a == "fence_sc" and kind_b == "fence_sc":
        return not (a.addr == CLEAN_FENCE and b.addr == CLEAN_FENCE)
    if a.kind == PROCESS_EXIT or b.kind == PROCESS_EXIT:
        return True
    if a.kind == AWAIT or b.kind == AWAIT:
        return _wakes(a, b) if a.kind == AWAIT else _wakes(b, a)
    if a.kind == "fence" or b.kind == "fence":
        return False
    if a.kind == "fence_sc" or b.kind == "fence_sc":
        return a.kind == b.kind and not (a.addr == CLEAN_FENCE and b.addr == CLEAN_FENCE)
    if a.kind in THREAD_KINDS or b.kind in THREAD_KINDS:
        return _involves(a, tid_b) or _involves(b, tid_a)
    return a.addr == b.addr and a.addr != "0x0" and (a.writes or b.writes)


def _involves(op: Op, tid: int) -> bool:
    """A join (or spawn, when the runtime names the child) of thread ``tid``."""
    if op.kind not in ("join", "spawn"):
        return False
    try:
        return int(op.addr, 16) == tid
    except ValueError:
        return False


@dataclass(frozen=True)
class Exploration:
    complete: bool             # every trace class ran (no bound hit, no divergence)
    schedules: int             # runs made
    bound: str | None          # which bound stopped it: "max-schedules=N", "preemption-bound=K", ...
    stopped: bool              # the caller asked to stop (a report) before the end
    sleep_blocked: int = 0     # runs whose tail was equivalent to one already run
    diverged: int = 0          # runs whose schedule prefix the program did not follow
    pending: int = 0           # bounded: queued schedules (each the start of a class not yet run)
    closure_states: int = 0    # sched_closure: branching states the runs' F-order closures searched
    closure_reruns: int = 0    # sched_closure: schedules run to confirm closure reports


_NONE: frozenset[int] = frozenset()
_ENTRY = attrgetter("entry")
#: The empty sleep set and yield counts a state shares with most others (never changed in place).
_EMPTY: dict = {}
#: {tid} as the done or backtrack set of a state (most states have one thread in each), shared.
_SINGLE: dict[int, frozenset[int]] = {}


def _with(threads: frozenset[int], tid: int) -> frozenset[int]:
    """``threads`` and ``tid``: a state's done and backtrack sets are frozensets that a change
    replaces, so that the states with the same one (most hold one thread) share it: the search
    tree holds hundreds of thousands of states (peterson,3: 397,653)."""
    if not threads:
        single = _SINGLE.get(tid)
        if single is None:
            single = _SINGLE[tid] = frozenset((tid,))
        return single
    return threads if tid in threads else threads | {tid}


class _Node:
    """A state of the search: the one after a schedule prefix."""

    __slots__ = ("enabled", "yielding", "counting", "forced", "backtrack", "done", "sleep", "children",
                 "preemptions", "last_tid", "clock", "entry", "scan", "wut")

    def __init__(self, step: Step, sleep: dict[int, Op], preemptions: int,
                 last_tid: int | None, forced: Mapping[int, int] = {}) -> None:
        # A yielding thread can run when a schedule names it: it is a choice like the enabled
        # ones (races are reversed into it), only the runtime's continuation never takes it.
        self.enabled: Mapping[int, Op] = {**step.yielding, **step.enabled} if step.yielding else step.enabled
        self.yielding = frozenset(step.yielding) - frozenset(step.enabled) if step.yielding else _NONE
        # the yielding threads whose repeats count (their loop's state does not come back)
        self.counting = step.counting & self.yielding if step.counting else _NONE
        # per yielding thread: how many of its steps in a row so far ran while it yielded
        self.forced = ({t: c for t, c in forced.items() if t in self.yielding} or _EMPTY) if forced else _EMPTY
        # the threads run from here, and those queued or run (frozensets: _with)
        self.backtrack: frozenset[int] = _NONE
        self.done: frozenset[int] = _NONE
        self.sleep = sleep or _EMPTY
        self.children: dict[int, _Node] = {}
        self.preemptions = preemptions    # preemptions on the path to this state
        self.last_tid = last_tid          # the thread that ran the step into this state
        # the vector clock of that step (add_race_backtracks): a function of the decisions
        # leading here, so every run through this state computes the same one
        self.clock: dict[int, int] | None = None
        # the step into this state (last_tid's), as the run that made the state traced it:
        # every later run through here makes it again (schedule.Prefix)
        self.entry: Step | None = None
        # the race scan's tables before the step out of this state (add_race_backtracks), kept
        # at a state where a run started: a function of the decisions leading here, like clock
        self.scan: _Scan | None = None
        # the wakeup tree (wakeup-tree mode, _Search.wakeup_trees): the sequences still to run
        # from here, as an ordered tree (_Wut); the branch a run follows leaves it when it starts
        self.wut: _Wut | None = None

    def preemption_cost(self, tid: int) -> int:
        """1 when running ``tid`` here switches away from a thread that could go on."""
        return int(self.last_tid is not None and tid != self.last_tid and self.last_tid in self.enabled
                   and self.last_tid not in self.yielding)


#: A wakeup tree (optimal DPOR, Abdulla et al., JACM 2017 §6): per thread that runs next, its
#: pending operation there and the subtree of what follows it, in the order the branches were
#: inserted (the leftmost runs first). A branch whose subtree is empty is a leaf.
_Wut = dict[int, tuple[Op, "_Wut"]]


@dataclass
class _Item:
    node: _Node
    prefix: tuple[int, ...]    # the decisions leading to node
    tid: int                   # the thread to run next
    sub: _Wut | None = None    # wakeup-tree mode: the subtree of the branch tid (its leftmost leaf runs)


#: run(prefix) -> (trace, payload); with ``sleep_aware``, run(prefix, sleep): ``sleep`` maps
#: each thread asleep at the state after the prefix to its pending operation, which the
#: continuation must not run until a dependent operation ran (docs/scheduling.md, "Sleep set").
RunFunction = Callable[..., tuple[Trace, Any]]
OnRun = Callable[[tuple[int, ...], Trace, Any], bool]


class _Search:
    #: keep the race scan's tables at the states where runs start (add_race_backtracks); off,
    #: every run scans its prefix from the root (tests: the same runs either way)
    keep_scans = True
    #: optimal DPOR with wakeup trees (Abdulla et al., JACM 2017) when the runs go one at a time
    #: and no preemption bound applies; off (or with jobs > 1, or a preemption bound), source-DPOR
    #: with backtrack sets (docs/design/exploration.md §21)
    wakeup_trees = True

    def __init__(self, run: RunFunction, on_run: OnRun, max_schedules: int,
                 preemption_bound: int | None, jobs: int,
                 progress: Callable[[int, int], None] | None, sleep: Mapping[int, Op] = {},
                 sleep_aware: bool = False) -> None:
        self.run = (lambda prefix, sleep: run(prefix, sleep)) if sleep_aware else (lambda prefix, sleep: run(prefix))
        self.root_sleep = dict(sleep)
        self.on_run = on_run
        self.max_schedules = max_schedules
        self.preemption_bound = preemption_bound
        self.jobs = max(1, jobs)
        self.progress = progress
        self.root: _Node | None = None
        self.stack: list[_Item] = []
        self.schedules = 0
        self.bound: str | None = None
        self.stopped = False
        self.sleep_blocked = 0
        self.diverged = 0
        self.pending = 0
        # the states along the last absorbed run (absorb's path, which it extends), and the
        # paths prefix_of found for the runs in flight, by the id of their prefix
        self.last_path: list[_Node] = []
        self.last_decisions: tuple[int, ...] = ()
        self.paths: dict[int, list[_Node]] = {}
        # wakeup-tree mode: a run's subtree to hand to the states it makes, by the id of its prefix
        self.carried: dict[int, _Wut] = {}
        self.wakeup = self.wakeup_trees and self.jobs == 1 and preemption_bound is None
        self.inserted = 0    # wakeup-tree mode: branches inserted (benchmarks/exploration_driver.py)
        self.unfollowed = 0  # wakeup-tree mode: runs that could not follow their branch's sequence to its end

    # --- the work list -------------------------------------------------------------------

    def add_backtrack(self, node: _Node, prefix: tuple[int, ...], tid: int) -> None:
        if tid in node.backtrack or tid in node.sleep:
            return
        if tid in node.yielding and node.forced.get(tid, 0) >= (COUNT_RUNS if tid in node.counting else YIELD_RUNS):
            self.bound = self.bound or f"yield-runs={COUNT_RUNS if tid in node.counting else YIELD_RUNS}"
            return
        if self.preemption_bound is not None and \
                node.preemptions + node.preemption_cost(tid) > self.preemption_bound:
            self.bound = self.bound or f"preemption-bound={self.preemption_bound}"
            return
        node.backtrack = _with(node.backtrack, tid)
        if self.wakeup:
            if node.wut is None:
                node.wut = {}
            node.wut.setdefault(tid, (node.enabled[tid], {}))
            self.inserted += 1
            return
        self.stack.append(_Item(node, prefix, tid))

    def next_item(self) -> _Item | None:
        """Wakeup-tree mode: the leftmost branch of the deepest state of the last run's path
        whose wakeup tree is not empty (depth first: every state off that path is finished)."""
        path = self.last_path
        for depth in range(len(path) - 1, -1, -1):
            node = path[depth]
            while node.wut:
                tid = next(iter(node.wut))
                _, sub = node.wut.pop(tid)
                if tid in node.enabled:
                    return _Item(node, self.last_decisions[:depth], tid, sub)
                # a branch the program cannot take here (a sequence it could not follow, `absorb`)
        return None

    def count_pending(self) -> int:
        """Bounded: the schedules known to remain (each the start of a class not yet run)."""
        if not self.wakeup:
            return len({(id(i.node), i.tid) for i in self.stack if i.tid not in i.node.done})

        def leaves(wut: _Wut) -> int:
            return sum(leaves(sub) if sub else 1 for _, sub in wut.values())

        return sum(leaves(node.wut) for node in self.last_path if node.wut)

    def prefix_of(self, item: _Item) -> Prefix:
        """The item's schedule, with the steps its run makes before its last decision: the
        entries of the states along it, which earlier runs traced (the program is
        deterministic under the scheduler, as everything here assumes: a run that is not
        follows another prefix, and the runtime says it diverged). The run need not trace
        them again (schedule.Prefix)."""
        if item.sub:
            # the run follows the leftmost leaf of the branch's subtree (wakeup-tree mode), and
            # the states it makes take the rest of the subtree (absorb)
            follow: list[int] = []
            sub = item.sub
            while sub:
                tid = next(iter(sub))
                follow.append(tid)
                sub = sub[tid][1]
            prefix = Prefix(item.prefix + (item.tid,) + tuple(follow))
            self.carried[id(prefix)] = item.sub
        else:
            prefix = Prefix(item.prefix + (item.tid,))
        path = self.path_to(item.node, item.prefix)
        if item.prefix:
            prefix.steps = tuple(map(_ENTRY, path[1:]))
        self.paths[id(prefix)] = path
        return prefix

    def path_to(self, node: _Node, prefix: tuple[int, ...]) -> list[_Node]:
        """The states from the root to ``node``, the state after ``prefix``: a part of the last
        run's path when that passed through ``node`` (the runs go depth first, so most do),
        else a walk down the tree."""
        last = self.last_path
        depth = len(prefix)
        if depth < len(last) and last[depth] is node:
            return last[:depth + 1]
        path = [self.root]
        for tid in prefix:
            path.append(path[-1].children[tid])   # type: ignore[union-attr]
        return path   # type: ignore[return-value]

    def start(self, item: _Item) -> dict[int, Op] | None:
        """Mark the item's thread done at its state; the sleep set of the child state
        (FG'05 sleep sets: threads explored from here before, whose next operation is
        independent of the one now run). None when already done."""
        node, tid = item.node, item.tid
        if tid in node.done:
            return None
        op = node.enabled[tid]
        asleep = {t: o for t, o in node.sleep.items() if not dependent(t, o, tid, op)}
        for t in node.done:
            if not dependent(t, node.enabled[t], tid, op):
                asleep[t] = node.enabled[t]
        node.done = _with(node.done, tid)
        return asleep

    @staticmethod
    def sleep_after(sleep: dict[int, Op], sub: _Wut | None) -> dict[int, Op]:
        """The sleep set at the end of the leftmost leaf of ``sub`` (the decisions a run of a
        wakeup-tree branch follows after its first), from ``sleep`` after the first: a thread
        stays asleep until an operation dependent with its own runs (the states along it are
        new, nothing else is done there)."""
        while sub:
            tid = next(iter(sub))
            op, sub = sub[tid]
            if sleep:
                sleep = {t: o for t, o in sleep.items() if not dependent(t, o, tid, op)}
        return sleep

    # --- one run's trace -------------------------------------------------------------------

    def absorb(self, prefix: tuple[int, ...], child_sleep: dict[int, Op], trace: Trace) -> None:
        """Extend the tree along the run's trace and add the backtrack points its races
        need. ``prefix`` ends with the thread the run was started for."""
        path = self.paths.pop(id(prefix), None)
        carry = self.carried.pop(id(prefix), None)
        steps = trace.steps
        decisions = trace.decisions
        if decisions[:len(prefix)] != prefix or trace.diverged is not None:
            if carry is not None and path is not None and trace.diverged is not None and \
                    len(path) <= trace.diverged < len(prefix) and decisions[:trace.diverged] == prefix[:trace.diverged]:
                # The run followed its state's prefix and the branch's first steps, then met a
                # step of the wakeup-tree sequence whose thread was not enabled (an await step
                # whose waking write the race scan does not order before it: the scan takes its
                # candidates by address). What it ran is a run of the program from the state it
                # was meant for, as a source-DPOR run started with the branch's first thread
                # would be: it is absorbed as one, and the branches of threads not enabled where
                # they stand leave the trees (`absorb`'s loop).
                self.unfollowed += 1
                prefix = prefix[:trace.diverged]
            else:
                # The program did not follow the prefix (it is not deterministic under the
                # scheduler): the run proves nothing about the state it was meant for.
                self.diverged += 1
                self.bound = self.bound or "nondeterminism"
                return
        if trace.end == "handover":
            # A thread went stall_ms without reaching a point the scheduler sees (it waits for
            # another thread inside an uninstrumented library, or computes for long), and the
            # run went on under the OS scheduler: its steps so far are valid, what followed
            # was not explored.
            self.bound = self.bound or "stall"
        if not steps:
            return
        if self.root is None:
            self.root = _Node(steps[0], dict(self.root_sleep), 0, None)
        if path is None:
            path = [self.root]
            for depth in range(len(prefix) - 1):
                path.append(path[-1].children[decisions[depth]])
        self.last_path = path
        self.last_decisions = decisions
        # the state where the run started (its prefix's last decision, or the first of the
        # sequence of a wakeup-tree branch it follows)
        start = len(path) - 1
        sleep = child_sleep
        cut = len(steps)
        for depth in range(start, len(steps)):
            step = steps[depth]
            node = path[depth]
            if depth > start or not prefix:
                if step.tid in node.sleep:
                    # Sleep-blocked: from here the run is equivalent to one already run.
                    # A sleep-aware scheduler would have run another thread: queue the first.
                    self.sleep_blocked += 1
                    awake = sorted(t for t in node.enabled if t not in node.sleep and t not in node.done)
                    # the runtime's own choice first: a yielding thread only when no other is left
                    awake = [t for t in awake if t not in node.yielding] or awake
                    if awake:
                        self.add_backtrack(node, decisions[:depth], awake[0])
                    cut = depth
                    break
                node.done = _with(node.done, step.tid)
                node.backtrack = _with(node.backtrack, step.tid)
                if node.wut:
                    # a state the run made while it followed a wakeup-tree branch: the branch
                    # it takes leaves the state's tree, its subtree goes to the next state
                    branch = node.wut.pop(step.tid, None)
                    carry = branch[1] if branch is not None else None
                    for tid in [t for t in node.wut if t not in node.enabled]:
                        del node.wut[tid]   # a sequence the program cannot follow from here
                else:
                    carry = None
                sleep = {t: o for t, o in node.sleep.items() if not dependent(t, o, step.tid, step.op)} \
                    if node.sleep else {}
            if depth + 1 < len(steps):
                child = node.children.get(step.tid)
                if child is None:
                    forced = node.forced
                    if step.tid in node.yielding:
                        forced = {**forced, step.tid: forced.get(step.tid, 0) + 1}
                    child = _Node(steps[depth + 1], sleep, node.preemptions + node.preemption_cost(step.tid),
                                  step.tid, forced)
                    child.entry = step
                    if carry:
                        child.wut = carry
                    node.children[step.tid] = child
                path.append(child)
        skipped = trace.closure.get("sleep_blocked") if trace.closure is not None else None
        if skipped is not None and cut > int(skipped):
            # The runtime searched no F-order closure for this run: it chose a sleeping thread
            # at that step by its own sleep set. Unless this search cut the run there too (the
            # two sleep sets agree), a class may have gone without its closure: no proof.
            self.bound = self.bound or "closure"
        self.add_race_backtracks(steps, decisions, path, max(start, 0), cut, _waiting_at(steps, cut, trace.blocked))

    def add_race_backtracks(self, steps: tuple[Step, ...], decisions: tuple[int, ...],
                            path: list[_Node], first: int, cut: int, blocked: Mapping[int, Op] = {}) -> None:
        """Backtracking from the trace (FG'05, with the race reversal of source-DPOR, Abdulla
        et al. POPL'14, which stays complete with sleep sets): for every operation j at or
        after ``first`` and every earlier operation i of another thread that is dependent
        with it and does not happen before j's thread's previous operation, the sequence v =
        (the operations after i that do not happen after i) + j must be able to start at
        the state before i: unless one of its initials (threads whose first operation in v
        nothing in v happens before) is already in that state's backtrack or sleep set, add
        one (j's thread when it is one). Races between two operations before ``first`` were
        handled by an earlier run, which shares them.

        ``blocked``: the pending operations of the threads the run ended with blocked (a
        deadlock, or a process exit while they wait). They never ran, but each races with the
        earlier operations it depends on exactly as if it ran last: in a run that deadlocks,
        a thread's blocked acquisition is the only trace of the order that would have let it
        through (without it, a class that starts with that thread is never run)."""
        # The tables of the scan are a function of the steps before j, so of the state before
        # step j (path[j]): a state where a run started keeps them as they were before its
        # step (path[first].scan), and a later run through it starts from the deepest state of
        # its path that kept them instead of scanning its prefix from the root.
        npath = len(path)
        keep = self.keep_scans
        begin = min(first, npath - 1) if keep else 0
        while begin > 0 and path[begin].scan is None:
            begin -= 1
        kept = path[begin].scan if begin > 0 else None
        # the clocks of the steps before it are the states' own (path[j + 1].clock), and a step's
        # place in its thread is its clock's entry for its thread
        states = [node.clock for node in path[1:begin + 1]] if kept is not None else []
        clocks: list[dict[int, int]]
        if kept is not None and None not in states:
            clocks = states   # type: ignore[assignment]
            position = [clock[step.tid] for clock, step in zip(clocks, steps)]
            (thread_last, spawned_by, last_write, writes, reads_since, last_sc_fence, clean_since, thread_ops,
             known) = kept.restore()
        else:
            begin = 0
            clocks = []           # vector clock of each operation
            position = []         # 1-based index of each operation in its thread
            thread_last = {}      # tid -> index of its latest operation
            spawned_by = {}       # child tid -> index of the spawn that made it
            # Only the immediate predecessors in the dependency order matter (source-DPOR races
            # are between operations with nothing ordered in between; the earlier ones happen
            # before those): per address the last write and the reads since, the last SC fence.
            # A blocking operation (a lock) is the exception: the race that matters is with the
            # previous acquisition, before the release that enabled it, so it sees every write.
            last_write = {}
            writes = {}
            reads_since = {}
            last_sc_fence = []    # the last SC fence that is not clean
            clean_since = []      # the clean SC fences after it
            thread_ops = []       # spawn/join/exit operations
            known = set(steps[0].enabled) if steps else set()
        nsteps = len(steps)
        # wakeup-tree mode: a reversal's sequence takes the run's steps after the race's second
        # operation too (notdep), so the races wait until the scan has every step's clock
        pairs: list[tuple[int, int]] | None = [] if self.wakeup else None
        for j in range(begin, cut):
            if j == first and j > begin and j < npath and keep and path[j].scan is None:
                path[j].scan = _Scan(thread_last, spawned_by, last_write, writes, reads_since, last_sc_fence,
                                     clean_since, thread_ops, known)
            step = steps[j]
            tid, op = step.tid, step.op
            # The state after step j (path[j + 1]) keeps its clock: a step before ``first`` was
            # a step of an earlier run through the same states, which computed it.
            after = path[j + 1] if j + 1 < npath else None
            if j < first and after is not None and after.clock is not None:
                clock = after.clock
                count = clock[tid]
            else:
                previous = thread_last.get(tid)
                if previous is not None:
                    base = clocks[previous]
                elif tid in spawned_by:
                    base = clocks[spawned_by[tid]]
                else:
                    base = {}
                count = position[previous] + 1 if previous is not None else 1
                candidates = self._dependent_earlier(tid, op, last_write, writes, reads_since, last_sc_fence,
                                                     clean_since, thread_ops, steps)
                if op.kind == PROCESS_EXIT:   # the latest operation of every other thread
                    candidates = [k for t, k in thread_last.items() if t != tid]
                clock = dict(base)
                for i in candidates:
                    for t, c in clocks[i].items():
                        if clock.get(t, 0) < c:
                            clock[t] = c
                clock[tid] = count
                if after is not None:
                    after.clock = clock
            clocks.append(clock)
            position.append(count)
            if j >= first:
                for i in candidates:
                    if base.get(steps[i].tid, 0) < position[i]:   # not _happens_before(i, ..., base)
                        if pairs is not None:
                            pairs.append((i, j))
                        else:
                            self._reverse_race(i, j, steps, decisions, path, clocks, position)
                if op.kind == PROCESS_EXIT:
                    # the exit ends the threads enabled beside it: each must also get a turn
                    # first; a yielding one when its turn is not a repeat (it counts, or it has
                    # a write to read that it has not read)
                    for other in sorted(step.enabled):
                        if other != tid and self.within_bound(path[j], other):
                            self.add_backtrack(path[j], decisions[:j], other)
                    for other in sorted(path[j].yielding):
                        if other != tid and self.within_bound(path[j], other) and \
                                (other in path[j].counting or _yield_news(other, j, steps)):
                            self.add_backtrack(path[j], decisions[:j], other)
            thread_last[tid] = j
            if op.kind == "spawn":   # its child, even one created waiting (explore_waits.py)
                note_spawn(spawned_by, op, j)
            if j + 1 < nsteps:
                following = steps[j + 1].enabled
                if not known.issuperset(following):   # a thread enabled for the first time
                    for new_tid in following:
                        if new_tid not in known:
                            known.add(new_tid)
                            if op.kind == "spawn":
                                spawned_by.setdefault(new_tid, j)
            kind, addr = op.kind, op.addr
            if kind == "fence_sc":
                if addr == CLEAN_FENCE:
                    clean_since.append(j)
                else:
                    last_sc_fence[:] = [j]
                    clean_since.clear()
            elif kind in THREAD_KINDS:
                thread_ops.append(j)
            elif kind != "fence" and addr != "0x0":
                if op.writes:
                    last_write[addr] = j
                    writes.setdefault(addr, []).append(j)
                    reads_since[addr] = []
                else:
                    reads_since.setdefault(addr, []).append(j)
        if pairs:
            for i, j in pairs:
                self._reverse_race(i, j, steps, decisions, path, clocks, position)
        for tid, op in sorted(blocked.items()):
            # a virtual last operation of its thread, seen by nothing after it
            previous = thread_last.get(tid)
            base = clocks[previous] if previous is not None else clocks[spawned_by[tid]] if tid in spawned_by else {}
            count = position[previous] + 1 if previous is not None else 1
            candidates = self._dependent_earlier(tid, op, last_write, writes, reads_since, last_sc_fence,
                                                 clean_since, thread_ops, steps)
            races = [i for i in candidates if not _happens_before(i, steps[i].tid, position, base)]
            if not races:
                continue
            clock = dict(base)
            for i in candidates:
                for t, c in clocks[i].items():
                    clock[t] = max(clock.get(t, 0), c)
            clock[tid] = count
            virtual = steps[:cut] + (Step(tid, {tid: op}),)
            for i in races:
                self._reverse_race(i, cut, virtual, decisions, path, clocks + [clock], position + [count])

    def _reverse_race(self, i: int, j: int, steps: tuple[Step, ...], decisions: tuple[int, ...],
                      path: list[_Node], clocks: list[dict[int, int]], position: list[int]) -> None:
        node = path[i]
        tid_i, tid_j = steps[i].tid, steps[j].tid
        kind_j = steps[j].op.kind
        if (kind_j == "lock" or kind_j == "join") and _waits_for(steps[i].op, steps[j].op):
            return
        # A blocking operation that is its thread's next one at the state before i, and waits
        # there, waits for i (what could let it through there is dependent with i, so it comes
        # after i): the two are never co-enabled, and there is nothing to reverse. When j's
        # thread has operations between i and j, it may wait before i for something else
        # (another mutex): those operations are then part of v below, and the reversal stands.
        if steps[j].op.kind in BLOCKING_KINDS and tid_j not in node.enabled and \
                not any(steps[k].tid == tid_j for k in range(i + 1, j)):
            return
        at = position[i]
        # not _happens_before(i, tid_i, ...); with wakeup trees every step of the run after i that
        # does not happen after it (notdep(i, E) of JACM 2017: none comes after j that j's
        # thread needs), else those before j (source-DPOR needs only v's initials)
        end = len(clocks) if self.wakeup else j
        v = list(compress(range(i + 1, end), map(at.__gt__, map(methodcaller("get", tid_i, 0), clocks[i + 1:end]))))
        if self.wakeup and v and v[-1] >= j:
            v = [k for k in v if k != j]
        v.append(j)
        initials = []
        seen_threads: set[int] = set()
        for index, k in enumerate(v):
            t = steps[k].tid
            if t in seen_threads:
                continue
            seen_threads.add(t)
            if k == j and self.wakeup:
                # j happens after i, so its clock knows steps of v through steps that are not in
                # v: in the sequence v it comes after what it is dependent with there alone
                op = steps[j].op
                if not any(dependent(steps[a].tid, steps[a].op, t, op) for a in v[:index]):
                    initials.append(t)
            elif not any(_happens_before(a, steps[a].tid, position, clocks[k]) for a in v[:index]):
                initials.append(t)
        if not self.wakeup and any(t in node.backtrack or t in node.sleep for t in initials):
            return
        # An initial that is not enabled before i (a lock held there) cannot go first: the
        # reversal is not feasible from that state.
        feasible = [t for t in initials if t in node.enabled]
        # A yielding thread goes first only when that gives one of its accesses in v a write it
        # has not read yet, or when it counts: then a repeat is a step of its count
        # (docs/scheduling.md, "Yielding threads in an exploration").
        feasible = [t for t in feasible
                    if t not in node.yielding or t in node.counting
                    or any(_news(t, i, k, steps) for k in v if steps[k].tid == t)]
        if not feasible:
            return
        choice = steps[j].tid if steps[j].tid in feasible else min(feasible)
        if self.wakeup:
            self._insert_reversal(node, [(steps[k].tid, steps[k].op) for k in v], initials,
                                  steps[v[0]].tid if steps[v[0]].tid in feasible else choice)
            return
        if self.within_bound(node, choice):
            self.add_backtrack(node, decisions[:i], choice)
            return
        # Over the preemption bound: the reversal is out of reach, but running the thread at
        # the latest earlier state where that is no preemption still covers schedules inside
        # the bound that the reversal would have led to (bounded POR, Coons et al. OOPSLA'13).
        self.bound = self.bound or f"preemption-bound={self.preemption_bound}"
        for k in range(i - 1, -1, -1):
            if choice in path[k].enabled and self.within_bound(path[k], choice):
                self.add_backtrack(path[k], decisions[:k], choice)
                return

    def _insert_reversal(self, node: _Node, seq: list[tuple[int, Op]], initials: list[int], first: int) -> None:
        """Optimal DPOR's step for a race (JACM 2017, Algorithm 2 lines 4-7): the reversal's
        sequence ``seq`` (v = notdep(i, E).j, each step as its thread and operation) goes into
        the wakeup tree of the state before i unless a thread asleep or done there is a weak
        initial of it (an initial, or a thread whose pending operation is independent of all of
        v: its own subtree then holds a run equivalent to one that starts with v). ``first``:
        the initial that goes first (one enabled at the state)."""
        # (the cheap test first: whether a thread asleep or done is an initial)
        if any(t in node.sleep or t in node.done for t in initials):
            return
        threads = {u for u, _ in seq}
        for t, op in [*node.sleep.items(), *((t, node.enabled[t]) for t in node.done)]:
            if t not in threads and not any(dependent(t, op, u, o) for u, o in seq):
                return
        if seq[0][0] != first:
            # an initial's first step can go first: nothing in v before it happens before it
            at = next(k for k, (u, _) in enumerate(seq) if u == first)
            seq = [seq[at]] + seq[:at] + seq[at + 1:]
        if node.wut is None:
            node.wut = {}
        level = node.wut
        rest = seq
        top = True
        while True:
            if not top and not level:
                return   # a leaf of the tree is compatible with v: a run of it covers v
            for tid, (op, sub) in level.items():
                # tid's step must be a weak initial of what is left of v: its first step in it
                # with no step before it dependent with it (then it leaves v), or, when tid has
                # none in it, a step independent of all of it
                found = next((k for k, (u, _) in enumerate(rest) if u == tid), None)
                if found is not None:
                    mine = rest[found][1]
                    if any(dependent(u, o, tid, mine) for u, o in rest[:found]):
                        continue
                    rest = rest[:found] + rest[found + 1:]
                elif any(dependent(tid, op, u, o) for u, o in rest):
                    continue
                level = sub
                break
            else:
                break
            top = False
            if not rest:
                return   # the branch walked holds v whole
        if top:
            tid = rest[0][0]
            if tid in node.yielding and node.forced.get(tid, 0) >= (COUNT_RUNS if tid in node.counting else YIELD_RUNS):
                self.bound = self.bound or f"yield-runs={COUNT_RUNS if tid in node.counting else YIELD_RUNS}"
                return
            node.backtrack = _with(node.backtrack, tid)
        # v's rest, a new branch after the others
        chain: _Wut = {}
        for tid, op in reversed(rest[1:]):
            chain = {tid: (op, chain)}
        level[rest[0][0]] = (rest[0][1], chain)
        self.inserted += 1

    def within_bound(self, node: _Node, tid: int) -> bool:
        return self.preemption_bound is None or \
            node.preemptions + node.preemption_cost(tid) <= self.preemption_bound

    @staticmethod
    def _dependent_earlier(tid: int, op: Op, last_write: dict[str, int], writes: dict[str, list[int]],
                           reads_since: dict[str, list[int]], last_sc_fence: list[int], clean_since: list[int],
                           thread_ops: list[int], steps: tuple[Step, ...]) -> list[int]:
        kind = op.kind
        if kind == "fence":
            return []
        if kind == "fence_sc":
            # clean fences commute with each other: like reads of F, the others like writes.
            # Every fence of the pool is an SC fence, and not both are clean: dependent
            # exactly when of another thread
            pool = last_sc_fence if op.addr == CLEAN_FENCE else last_sc_fence + clean_since
            return [i for i in pool if steps[i].tid != tid]
        if kind in THREAD_KINDS:
            pool = thread_ops
        elif kind in BLOCKING_KINDS:
            pool = writes.get(op.addr, []) + (reads_since.get(op.addr, []) if op.writes else [])
        else:
            pool = [last_write[op.addr]] if op.addr in last_write else []
            if op.writes:
                pool = pool + reads_since.get(op.addr, [])
            if kind in ACCESS_KINDS:
                # the pool holds operations of op's address, the write's side taken care of
                # (the last write, the reads only when op writes): a plain access of another
                # thread there is dependent with op (dependent's first fast path); the others
                # keep their own rules
                return [i for i in pool if steps[i].tid != tid and (
                    steps[i].op.kind in ACCESS_KINDS or dependent(steps[i].tid, steps[i].op, tid, op))]
        return [i for i in pool if dependent(steps[i].tid, steps[i].op, tid, op)]

    # --- the loop -------------------------------------------------------------------------

    def explore(self) -> Exploration:
        first_trace = self.execute(())
        if first_trace is not None and not self.stopped:
            self.absorb((), {}, first_trace)
        if self.jobs == 1:
            return self.explore_serial()
        lock = threading.Lock()
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            running: dict[Future, tuple[tuple[int, ...], dict[int, Op]]] = {}
            while (self.stack or running) and not self.stopped:
                while self.stack and len(running) < self.jobs and not self.stopped:
                    if self.schedules + len(running) >= self.max_schedules:
                        self.bound = f"max-schedules={self.max_schedules}"
                        self.pending = len({(id(i.node), i.tid) for i in self.stack if i.tid not in i.node.done})
                        self.stack.clear()
                        break
                    item = self.stack.pop()
                    child_sleep = self.start(item)
                    if child_sleep is None:
                        continue
                    submitted = self.prefix_of(item)
                    running[pool.submit(self.run, submitted, child_sleep)] = (submitted, child_sleep)
                if not running:
                    break
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    prefix, child_sleep = running.pop(future)
                    trace, payload = future.result()
                    with lock:
                        self.schedules += 1
                        if self.progress is not None:
                            self.progress(self.schedules, len(self.stack))
                        if self.on_run(prefix, trace, payload):
                            self.stopped = True
                        if not self.stopped:
                            self.absorb(prefix, child_sleep, trace)
            for future in running:
                future.cancel()
        complete = self.bound is None and not self.stopped
        return Exploration(complete, self.schedules, None if complete else self.bound, self.stopped,
                           self.sleep_blocked, self.diverged, self.pending)

    def explore_serial(self) -> Exploration:
        """One job: the runs go in this thread, one after the other, in the order the loop of
        ``explore`` takes them with one worker (no future, no lock and no wait per run; the
        fork server of the first run serves them all)."""
        stack = self.stack
        wakeup = self.wakeup
        while not self.stopped:
            if self.schedules >= self.max_schedules:
                if any(node.wut for node in self.last_path) if wakeup else stack:
                    self.bound = f"max-schedules={self.max_schedules}"
                    self.pending = self.count_pending()
                    stack.clear()
                break
            item = self.next_item() if wakeup else stack.pop() if stack else None
            if item is None:
                # nothing left, or only branches the program cannot take (next_item)
                break
            child_sleep = self.start(item)
            if child_sleep is None:
                continue
            prefix = self.prefix_of(item)
            trace, payload = self.run(prefix, self.sleep_after(child_sleep, item.sub) if item.sub else child_sleep)
            self.schedules += 1
            if self.progress is not None:
                self.progress(self.schedules, len(stack))
            if self.on_run(prefix, trace, payload):
                self.stopped = True
            else:
                self.absorb(prefix, child_sleep, trace)
        complete = self.bound is None and not self.stopped
        return Exploration(complete, self.schedules, None if complete else self.bound, self.stopped,
                           self.sleep_blocked, self.diverged, self.pending)

    def execute(self, prefix: tuple[int, ...]) -> Trace | None:
        trace, payload = self.run(prefix, {})
        self.schedules += 1
        if self.progress is not None:
            self.progress(self.schedules, 0)
        if self.on_run(prefix, trace, payload):
            self.stopped = True
        return trace


class _Scan:
    """The tables of add_race_backtracks before a step, but the clocks and places of the steps
    before it (the states' clocks give them): a copy, the scan goes on changing its own."""

    __slots__ = ("thread_last", "spawned_by", "last_write", "writes", "reads_since", "last_sc_fence",
                 "clean_since", "thread_ops", "known")

    def __init__(self, thread_last: dict[int, int], spawned_by: dict[int, int], last_write: dict[str, int],
                 writes: dict[str, list[int]], reads_since: dict[str, list[int]], last_sc_fence: list[int],
                 clean_since: list[int], thread_ops: list[int], known: set[int]) -> None:
        self.thread_last = dict(thread_last)
        self.spawned_by = dict(spawned_by)
        self.last_write = dict(last_write)
        self.writes = {a: tuple(w) for a, w in writes.items()}
        self.reads_since = {a: tuple(r) for a, r in reads_since.items()}
        self.last_sc_fence = tuple(last_sc_fence)
        self.clean_since = tuple(clean_since)
        self.thread_ops = tuple(thread_ops)
        self.known = frozenset(known)

    def restore(self) -> tuple:
        return (dict(self.thread_last), dict(self.spawned_by), dict(self.last_write),
                {a: list(w) for a, w in self.writes.items()}, {a: list(r) for a, r in self.reads_since.items()},
                list(self.last_sc_fence), list(self.clean_since), list(self.thread_ops), set(self.known))


def _waiting_at(steps: tuple[Step, ...], cut: int, blocked: Mapping[int, Op]) -> dict[int, Op]:
    """The threads that wait at the state before step ``cut`` (started, not enabled there),
    with the operation each waits to make: its next step after the cut, or the one it was
    still blocked on when the run ended. A run cut where it became sleep-blocked keeps them:
    the run it is equivalent to made its waits in another order (a sleeping thread's step
    first), so the races of these waits with the steps before the cut are this run's alone."""
    if cut == len(steps):
        return dict(blocked)
    started = {s.tid for s in steps[:cut]} | {t for s in steps[:cut + 1] for t in s.enabled}
    enabled = {**steps[cut].yielding, **steps[cut].enabled}
    waiting: dict[int, Op] = {}
    for step in steps[cut:]:
        if step.tid in started and step.tid not in enabled:
            waiting.setdefault(step.tid, step.op)
    for tid, op in blocked.items():
        if tid in started and tid not in enabled:
            waiting.setdefault(tid, op)
    return waiting


#: Kinds of a plain memory access (the others wait, synchronise or are thread operations).
ACCESS_KINDS = frozenset({"load", "store", "rmw"})


def _news(tid: int, i: int, k: int, steps: tuple[Step, ...]) -> bool:
    """Running the yielding thread ``tid``'s operation ``k`` (of the reversed sequence) from the
    state before step ``i`` on is not a repeat: it is a store, or a read (load, rmw) of a word on which
    ``tid`` has read no write since the last write before ``i`` (so it reads a write that
    none of its earlier reads read). A repeat re-reads the write its spin already read: the
    iteration it adds reads what the one before read (docs/scheduling.md)."""
    op = steps[k].op
    if op.kind not in ACCESS_KINDS or op.addr == "0x0":
        return False
    if op.kind == "store":
        return True
    # a load, or an rmw: one that changes memory ends the yield, so while it yields its rmws
    # behave as the one before them did as long as they read the same write
    word = int(op.addr, 16) >> 3
    for m in range(i - 1, -1, -1):
        other = steps[m].op
        if other.kind not in ACCESS_KINDS or other.addr == "0x0" or int(other.addr, 16) >> 3 != word:
            continue
        if other.writes:
            return True
        if steps[m].tid == tid:
            return False
    return True


def _yield_news(tid: int, i: int, steps: tuple[Step, ...]) -> bool:
    """The yielding thread ``tid``, pending at the state before step ``i``, has news there: its
    pending operation is news (``_news``), or a word it read since its last step that was not a
    read or a fence (its spin) was written by another thread after its last read of it. Without
    news its next operations re-read what they read before, until one reads a word that brings
    some: a turn then would only repeat (docs/scheduling.md, "Yielding threads in an
    exploration")."""
    op = steps[i].yielding.get(tid)
    if op is None:
        return False
    if op.kind in ACCESS_KINDS and op.addr != "0x0" and \
            _news(tid, i, i, steps[:i] + (Step(tid, {tid: op}),)):
        return True
    start = i
    while start > 0 and not (steps[start - 1].tid == tid and steps[start - 1].op.kind not in SPIN_KINDS):
        start -= 1
    read: set[int] = set()
    stale: set[int] = set()
    for m in range(start, i):
        other = steps[m].op
        if other.kind not in ACCESS_KINDS or other.addr == "0x0":
            continue
        word = int(other.addr, 16) >> 3
        if steps[m].tid == tid:
            read.add(word)
            stale.discard(word)
        elif other.writes and word in read:
            stale.add(word)
    return bool(stale)


#: A spinning thread's steps: its reads, and fences.
SPIN_KINDS = frozenset({"load", "rmw", "fence", "fence_sc"})


def _waits_for(a: Op, b: Op) -> bool:
    """b can never run before a, wherever a's thread stands: b locks the mutex a unlocks (a's
    thread held it since its lock, which came earlier), or b joins the thread that a ends."""
    return (a.kind, b.kind) in (("unlock", "lock"), ("exit", "join"))


def _happens_before(i: int, tid_i: int, position: list[int], clock: Mapping[int, int]) -> bool:
    return clock.get(tid_i, 0) >= position[i]


def explore(run: RunFunction, *, on_run: OnRun = lambda prefix, trace, payload: False,
            max_schedules: int = 10000, preemption_bound: int | None = None, jobs: int = 1,
            progress: Callable[[int, int], None] | None = None, sleep: Mapping[int, Op] = {},
            sleep_aware: bool = False) -> Exploration:
    """Run the program under every schedule class DPOR needs. ``run(prefix)`` executes one
    run that follows ``prefix`` and then the default continuation, returning (trace,
    payload); ``on_run`` sees each run and returns True to stop (a report). ``progress``
    gets (runs made, runs queued). With ``jobs`` > 1 up to that many runs go at once.
    ``sleep``: the sleep set of the initial state (threads whose orders from there were
    explored elsewhere, e.g. in another shard's subtree). ``sleep_aware``: ``run`` takes the
    sleep set too, and its continuation avoids sleeping threads (fewer runs cut as
    sleep-blocked)."""
    search = _Search(run, on_run, max_schedules, preemption_bound, jobs, progress, sleep, sleep_aware)
    # The search tree only grows and holds no reference cycles (a node owns its children), so the
    # cyclic collector would only rescan it, ever more of it: 17% of the driver's CPU over 3,000
    # schedules of peterson,3 (benchmarks/README.md "Session 15: closure with blocked iterations").
    collecting = gc.isenabled()
    gc.disable()
    try:
        return search.explore()
    finally:
        if collecting:
            gc.enable()

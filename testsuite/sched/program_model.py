"""A tiny simulated program for testing the explorer without the runtime: threads are lists of
(kind, addr, writes) operations; `lock`/`unlock` act on a mutex (a lock is disabled while another
thread holds it). `simulate` follows docs/scheduling.md exactly as the runtime does: the prefix,
then the default continuation, and returns the trace the runtime would write."""

from __future__ import annotations

from typing import Callable

from pyrsan.explore import CLEAN_FENCE, dependent
from pyrsan.schedule import Op, Step, Trace

Program = tuple[tuple[tuple[str, str, bool], ...], ...]


def with_main_thread(threads: Program, main_ops: tuple = ()) -> Program:
    """Thread 0 spawns the others (tids 1..n, in order), runs ``main_ops``, joins them;
    each spawned thread ends with its exit step, as the runtime traces it."""
    children = range(1, len(threads) + 1)
    main = tuple(("spawn", hex(t), True) for t in children) + tuple(main_ops) + \
        tuple(("join", hex(t), False) for t in children)
    return (main,) + tuple(tuple(ops) + (("exit", "0x0", False),) for ops in threads)


def with_main_exiting(threads: Program, main_ops: tuple = ()) -> Program:
    """Thread 0 spawns the others, runs ``main_ops`` and ends the process without joining them
    (``exit_process``: the threads still running end with it)."""
    children = range(1, len(threads) + 1)
    main = tuple(("spawn", hex(t), True) for t in children) + tuple(main_ops) + (("exit_process", "0x0", True),)
    return (main,) + tuple(tuple(ops) + (("exit", "0x0", False),) for ops in threads)


class _State:
    def __init__(self, program: Program, clean: Callable[[tuple[int, ...]], frozenset] | None = None) -> None:
        self.program = program
        self.clean = clean   # the runtime's clean-fence labels after a sequence of steps
        self.done: tuple[int, ...] = ()
        self.position = [0] * len(program)
        self.holder: dict[str, int] = {}
        # With a spawning thread 0, the others start when spawned.
        spawns = {int(addr, 16) for kind, addr, _ in program[0] if kind == "spawn"}
        self.started = {t for t in range(len(program)) if t not in spawns}
        self.ended = False   # an exit_process ran: no thread runs any more

    def pending(self, tid: int) -> Op | None:
        ops = self.program[tid]
        if self.position[tid] >= len(ops):
            return None
        kind, addr, writes = ops[self.position[tid]]
        if kind == "fence_sc" and self.clean is not None:
            if tid in self.clean(self.done):
                addr = CLEAN_FENCE
        elif kind == "fence_sc" and self.position[tid] and ops[self.position[tid] - 1][0] == "fence_sc":
            addr = CLEAN_FENCE   # an SC fence right after one of its thread is clean (a sub-case)
        return Op(kind, addr, writes)

    def enabled(self) -> dict[int, Op]:
        return {} if self.ended else self.runnable()

    def blocked(self) -> dict[int, Op]:
        """The threads that wait (a lock held, a join) with their pending operation, as the
        runtime's trace end line lists them."""
        runnable = self.runnable()
        return {t: op for t in sorted(self.started) if (op := self.pending(t)) is not None and t not in runnable}

    def runnable(self) -> dict[int, Op]:
        result = {}
        for tid in range(len(self.program)):
            op = self.pending(tid)
            if op is None or tid not in self.started or (op.kind == "lock" and op.addr in self.holder):
                continue
            if op.kind == "join" and self.pending(int(op.addr, 16)) is not None:
                continue
            result[tid] = op
        return result

    def execute(self, tid: int) -> None:
        op = self.pending(tid)
        if op.kind == "lock":
            self.holder[op.addr] = tid
        elif op.kind == "unlock":
            self.holder.pop(op.addr, None)
        elif op.kind == "spawn":
            self.started.add(int(op.addr, 16))
        elif op.kind == "exit_process":
            self.ended = True
        self.position[tid] += 1
        self.done += (tid,)

    def finished(self) -> bool:
        return self.ended or all(self.position[t] == len(ops) for t, ops in enumerate(self.program))


def simulate(program: Program, prefix: tuple[int, ...] = (), sleep: dict | None = None,
             clean: Callable[[tuple[int, ...]], frozenset] | None = None) -> Trace:
    """``clean``: the tids whose pending SC fence is clean after a sequence of steps (the
    runtime's label, sched_fence.c); by default an SC fence right after one of its thread.
    ``sleep``: the sleep set at the state after the prefix (docs/scheduling.md "Sleep set"):
    the continuation runs no sleeping thread while an awake one is enabled; a sleeper wakes
    when an operation dependent with its pending one runs."""
    state = _State(program, clean)
    steps: list[Step] = []
    diverged = None
    last = None
    asleep = dict(sleep or {})
    while True:
        enabled = state.enabled()
        if not enabled:
            break
        index = len(steps)
        if index < len(prefix) and diverged is None and prefix[index] in enabled:
            tid = prefix[index]
        else:
            if index < len(prefix) and diverged is None:
                diverged = index
            awake = [t for t in enabled if t not in asleep] if index >= len(prefix) else list(enabled)
            pool = awake or list(enabled)
            tid = last if last in pool else min(pool)
        steps.append(Step(tid, enabled))
        if index >= len(prefix):
            asleep = {t: o for t, o in asleep.items() if not dependent(t, o, tid, enabled[tid])}
        state.execute(tid)
        last = tid
    return Trace(tuple(steps), "exit" if state.finished() else "deadlock", diverged, "dfs", 0,
                 blocked=state.blocked())


def trace_class(trace: Trace) -> frozenset:
    """The Mazurkiewicz class of a run: its events and the order of every dependent pair."""
    events = []
    count: dict[int, int] = {}
    for step in trace.steps:
        count[step.tid] = count.get(step.tid, 0) + 1
        events.append((step.tid, count[step.tid], step.op))
    ordered = set()
    for i, (ti, ki, oi) in enumerate(events):
        for tj, kj, oj in events[i + 1:]:
            if dependent(ti, oi, tj, oj):
                ordered.add(((ti, ki), (tj, kj)))
    return frozenset([frozenset((t, k) for t, k, _ in events), frozenset(ordered)])


def all_classes(program: Program) -> tuple[set, int]:
    """Brute force: the classes of every maximal interleaving, and how many interleavings."""
    classes: set = set()
    runs = 0

    def walk(prefix: tuple[int, ...]) -> None:
        nonlocal runs
        state = _State(program)
        for tid in prefix:
            state.execute(tid)
        enabled = state.enabled()
        if not enabled:
            runs += 1
            classes.add(trace_class(simulate(program, prefix)))
            return
        for tid in sorted(enabled):
            walk(prefix + (tid,))

    walk(())
    return classes, runs

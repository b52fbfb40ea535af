"""The driver's per-schedule shortcuts (docs/design/exploration.md §24) decide what the general
rules decide: the dependence test's fast paths, the race scan's candidates, the shared sets of
the search tree's states, and the fork server's waits on the socket's own timeout."""

from __future__ import annotations

import random
import socket
import threading

from pyrsan import explore as ex
from pyrsan.explore import AWAIT, BLOCKING_KINDS, CLEAN_FENCE, PROCESS_EXIT, THREAD_KINDS, dependent
from pyrsan.forkserver import ForkServer
from pyrsan.schedule import Op, Step
from pyrsan.watchdog import POLL

from .program_model import simulate, with_main_thread

KINDS = ("load", "store", "rmw", "fence", "fence_sc", "lock", "unlock", "wait", "await", "spawn", "join", "exit",
         PROCESS_EXIT, "sync_acquire", "sync_release")
ADDRS = ("0x0", "0x1", "0x10", "0x14", "0x18", "0x10+0x18", "0x2", "0x3")


def _rule(tid_a: int, a: Op, tid_b: int, b: Op) -> bool:
    """docs/scheduling.md "Trace file", dependent operations, rule by rule (explore.dependent
    before its fast paths)."""
    if tid_a == tid_b:
        return False
    if PROCESS_EXIT in (a.kind, b.kind):
        return True
    if AWAIT in (a.kind, b.kind):
        return ex._wakes(a, b) if a.kind == AWAIT else ex._wakes(b, a)
    if "fence" in (a.kind, b.kind):
        return False
    if "fence_sc" in (a.kind, b.kind):
        return a.kind == b.kind and not (a.addr == CLEAN_FENCE and b.addr == CLEAN_FENCE)
    if a.kind in THREAD_KINDS or b.kind in THREAD_KINDS:
        return ex._involves(a, tid_b) or ex._involves(b, tid_a)
    return a.addr == b.addr and a.addr != "0x0" and (a.writes or b.writes)


def _op(rng: random.Random) -> Op:
    return Op(rng.choice(KINDS), rng.choice(ADDRS), rng.random() < 0.5)


def test_the_dependence_tests_fast_paths_decide_as_its_rules():
    ops = [Op(kind, addr, writes) for kind in KINDS for addr in ADDRS for writes in (False, True)]
    for a in ops:
        for b in ops:
            for tid_a, tid_b in ((1, 2), (2, 1), (1, 1), (2, 16)):
                assert dependent(tid_a, a, tid_b, b) == _rule(tid_a, a, tid_b, b), (tid_a, a, tid_b, b)


def test_the_race_scans_candidates_are_the_dependent_operations_of_its_tables():
    """For every step of random runs, ``_dependent_earlier`` returns the operations of the scan's
    tables (the pools of add_race_backtracks) that ``dependent`` says are dependent with it."""
    rng = random.Random(23)
    for _ in range(300):
        steps = tuple(Step(tid, {tid: _op(rng)}) for tid in (rng.randrange(4) for _ in range(30)))
        last_write: dict[str, int] = {}
        writes: dict[str, list[int]] = {}
        reads_since: dict[str, list[int]] = {}
        last_sc_fence: list[int] = []
        clean_since: list[int] = []
        thread_ops: list[int] = []
        for j, step in enumerate(steps):
            op = step.op
            if op.kind == "fence":
                pool: list[int] = []
            elif op.kind == "fence_sc":
                pool = last_sc_fence if op.addr == CLEAN_FENCE else last_sc_fence + clean_since
            elif op.kind in THREAD_KINDS:
                pool = thread_ops
            elif op.kind in BLOCKING_KINDS:
                pool = writes.get(op.addr, []) + (reads_since.get(op.addr, []) if op.writes else [])
            else:
                pool = ([last_write[op.addr]] if op.addr in last_write else []) + \
                    (reads_since.get(op.addr, []) if op.writes else [])
            expected = [i for i in pool if dependent(steps[i].tid, steps[i].op, step.tid, op)]
            got = ex._Search._dependent_earlier(step.tid, op, last_write, writes, reads_since, last_sc_fence,
                                                clean_since, thread_ops, steps)
            assert got == expected, (steps[:j + 1], got, expected)
            # the tables as add_race_backtracks keeps them
            if op.kind == "fence_sc":
                if op.addr == CLEAN_FENCE:
                    clean_since.append(j)
                else:
                    last_sc_fence[:] = [j]
                    clean_since.clear()
            elif op.kind in THREAD_KINDS:
                thread_ops.append(j)
            elif op.kind != "fence" and op.addr != "0x0":
                if op.writes:
                    last_write[op.addr] = j
                    writes.setdefault(op.addr, []).append(j)
                    reads_since[op.addr] = []
                else:
                    reads_since.setdefault(op.addr, []).append(j)


def test_states_share_their_done_sets_and_a_change_leaves_the_others_alone():
    """Most states hold one thread in their done and backtrack sets: they share one frozenset,
    which a change replaces rather than alters (mutant: the set changed in place)."""
    program = with_main_thread(((("store", "0x10", True), ("load", "0x14", False)),
                                (("store", "0x14", True), ("load", "0x10", False))))
    kept: list = []
    original = ex._Search.explore_serial

    def keeping(self):
        kept.append(self)
        return original(self)

    ex._Search.explore_serial = keeping   # type: ignore[method-assign]
    try:
        result = ex.explore(lambda prefix, sleep: (simulate(program, prefix, dict(sleep)), None), sleep_aware=True)
    finally:
        ex._Search.explore_serial = original   # type: ignore[method-assign]
    assert result.complete and result.sleep_blocked == 0
    nodes, stack = [], [kept[0].root]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(node.children.values())
    for node in nodes:
        assert frozenset(node.children) <= node.done, node.done
        assert node.done <= node.backtrack
    singles = {id(node.done) for node in nodes if len(node.done) == 1}
    assert len(singles) <= 3   # one {tid} per thread, shared


def _server(sock: socket.socket) -> ForkServer:
    """A ForkServer reading from ``sock`` (only its line reader is used)."""
    server = ForkServer.__new__(ForkServer)
    server.sock, server.pending = sock, b""
    return server


def test_the_fork_servers_line_reader_keeps_half_lines_and_waits_its_whole_timeout():
    ours, theirs = socket.socketpair()
    try:
        server = _server(ours)
        assert server._line(POLL) is None          # nothing within the watchdog's period
        theirs.sendall(b"pid 12")
        assert server._line(POLL) is None          # half a line is no line; kept
        theirs.sendall(b"3\nstatus 0\n")
        assert server._line(POLL) == "pid 123"
        assert server._line(POLL) == "status 0"    # already read with the first
        # a line that comes after more than the watchdog's period, within the caller's own
        # timeout (mutant: the wait cut at the period: None)
        sender = threading.Timer(2.5 * POLL, lambda: theirs.sendall(b"ready\n"))
        sender.start()
        try:
            assert server._line(60.0) == "ready"
        finally:
            sender.join()
        theirs.close()
        assert server._line(60.0) == ""             # the end of the socket
    finally:
        ours.close()

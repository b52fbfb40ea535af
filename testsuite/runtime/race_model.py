"""Reference model of C11/RC11 data races for the differential test of the race detector.

Independent of the runtime: no vector clocks. A run of a straight-line program in a given
interleaving (an SC execution) defines the execution graph: po (program order per thread),
rf (each atomic read reads the latest write of its location before it, or the initial value),
mo (the order of the writes of each location in the run). Then, by the definitions of
C++20 [intro.races] / RC11 (Lahav et al., PLDI 2017, §3):

- release sequence rs(h) of a write h: h and the maximal run of RMWs that follow h in mo
  (C++20: any non-RMW write ends it, by any thread);
- sw: A sw B when some read r reads from a write of rs(h), where A is h itself (h a release
  write) or a release fence po-before h (h any atomic write), and B is r itself (r an
  acquire read) or an acquire fence po-after r (r any atomic read);
- hb = (po ∪ sw)+ (threads are created before any of their events, the initial values are
  written before the threads start: neither adds an edge between two threads), and, when
  thread 0 spawns the others (spawn_join programs), its spawn before each other thread's
  first event and each thread's last event before thread 0's join of it;
- orders: seq_cst counts as acquire and release (psc is not part of hb), an SC fence as an
  acq_rel fence; a failed CAS is a read with its failure order;
- race: two accesses of common bytes of one location by different threads, at least one a
  write, not both atomic, unordered by hb (atomic accesses are of bytes 0-3).

Program ops (one list per thread):
  ("read", v) ("write", v)                    plain accesses of bytes 0-3 of a location
  ("read", v, off, size) ("write", v, off, size)  plain accesses of bytes off..off+size-1
  ("ld", x, order) ("st", x, value, order)    atomic load / store
  ("rmw", x, op, value, order)                op "add" or "xchg"
  ("cas", x, expected, desired, succ, fail)   strong CAS
  ("fence", order)
  ("spawn",) ("join", k)                      thread 0 only (spawn_join programs): thread 0 is
                                              main, the others start after its spawn; join k
                                              waits for thread k's end
Orders: "rlx", "acq", "rel", "ar", "sc".
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

ACQ = {"acq", "ar", "sc"}
REL = {"rel", "ar", "sc"}
PLAIN_VARS = ("d0", "d1")
ATOMIC_VARS = ("x", "y")


@dataclass
class Event:
    thread: int
    index: int           # position in its thread
    op: tuple
    reads: bool = False  # atomic read part (ld, rmw, cas)
    writes: bool = False  # atomic write (st, rmw, successful cas)
    read_order: str = "rlx"
    write_order: str = "rlx"
    rf: "Event | None" = None
    succ: list = field(default_factory=list)  # po and sw successors (indices)


def location(op: tuple) -> str | None:
    return None if op[0] in ("fence", "spawn", "join") else op[1]


def byte_range(op: tuple) -> tuple[int, int]:
    """(offset, size) of the bytes an access touches in its location."""
    if op[0] in ("read", "write") and len(op) > 2:
        return op[2], op[3]
    return 0, 4


def execute(threads: list[list[tuple]], schedule) -> list[Event]:
    """The events of the run, in the order of the schedule, with rf filled in."""
    pos = [0] * len(threads)
    mem: dict[str, int] = {}
    last: dict[str, Event] = {}
    events: list[Event] = []
    for k in schedule:
        op = threads[k][pos[k]]
        e = Event(k, pos[k], op)
        pos[k] += 1
        kind = op[0]
        if kind in ("ld", "rmw", "cas"):
            e.reads, e.rf = True, last.get(op[1])
            old = mem.get(op[1], 0)
        if kind == "ld":
            e.read_order = op[2]
        elif kind == "st":
            e.writes, e.write_order = True, op[3]
            mem[op[1]] = op[2]
        elif kind == "rmw":
            e.writes = True
            e.read_order = e.write_order = op[4]
            mem[op[1]] = old + op[3] if op[2] == "add" else op[3]
        elif kind == "cas":
            if old == op[2]:
                e.writes = True
                e.read_order = e.write_order = op[4]
                mem[op[1]] = op[3]
            else:
                e.read_order = op[5]
        if e.writes:
            last[op[1]] = e
        events.append(e)
    return events


def happens_before(events: list[Event]) -> list[int]:
    """hb as one bit set per event: bit j of hb[i] set iff events[j] hb events[i]."""
    n = len(events)
    ix = {id(e): i for i, e in enumerate(events)}
    preds: list[set[int]] = [set() for _ in range(n)]
    by_thread: dict[int, list[int]] = {}
    for i, e in enumerate(events):
        by_thread.setdefault(e.thread, []).append(i)
    for idxs in by_thread.values():  # po (the run keeps each thread's order)
        for a, b in zip(idxs, idxs[1:]):
            preds[b].add(a)
    for i, e in enumerate(events):  # spawn and join (thread 0, spawn_join programs)
        if e.op[0] == "spawn":
            for t, idxs in by_thread.items():
                if t:
                    preds[idxs[0]].add(i)
        elif e.op[0] == "join":
            preds[i].add(by_thread[e.op[1]][-1])
    mo: dict[str, list[int]] = {}
    for i, e in enumerate(events):
        if e.writes:
            mo.setdefault(e.op[1], []).append(i)

    def heads(w: int) -> list[int]:
        """The writes h with w in rs(h)."""
        order = mo[events[w].op[1]]
        p = order.index(w)
        out = [w]
        while p > 0 and events[order[p]].op[0] in ("rmw", "cas"):
            p -= 1
            out.append(order[p])
        return out

    for r, e in enumerate(events):
        if not e.reads or e.rf is None:
            continue
        w = ix[id(e.rf)]
        acq_side = [r] if e.read_order in ACQ else []
        acq_side += [j for j in by_thread[e.thread]
                     if events[j].index > e.index and events[j].op[0] == "fence" and events[j].op[1] in ACQ]
        for h in heads(w):
            he = events[h]
            rel_side = [h] if he.write_order in REL else []
            rel_side += [j for j in by_thread[he.thread]
                         if events[j].index < he.index and events[j].op[0] == "fence" and events[j].op[1] in REL]
            for a in rel_side:
                for b in acq_side:
                    preds[b].add(a)
    # transitive closure; every edge goes forward in the run (po, and sw from a write or a
    # fence before the read that reads it, to the read or a fence after it)
    hb = [0] * n
    for i in range(n):
        bits = 0
        for p in preds[i]:
            assert p < i, "an hb edge against the run's order"
            bits |= hb[p] | (1 << p)
        hb[i] = bits
    return hb


def racy_locations(threads: list[list[tuple]], schedule) -> set[str]:
    events = execute(threads, schedule)
    hb = happens_before(events)
    out: set[str] = set()
    for j, b in enumerate(events):
        lb = location(b.op)
        if lb is None:
            continue
        b_plain = b.op[0] in ("read", "write")
        b_write = b.op[0] == "write" or b.writes
        b_off, b_size = byte_range(b.op)
        for i in range(j):
            a = events[i]
            if a.thread == b.thread or location(a.op) != lb:
                continue
            a_off, a_size = byte_range(a.op)
            if a_off >= b_off + b_size or b_off >= a_off + a_size:
                continue  # no common byte
            a_plain = a.op[0] in ("read", "write")
            a_write = a.op[0] == "write" or a.writes
            if (a_write or b_write) and (a_plain or b_plain) and not (hb[j] >> i) & 1:
                out.add(lb)
    return out


# ---- random programs ----
def random_op(rng: random.Random) -> tuple:
    r = rng.random()
    if r < 0.35:
        return (rng.choice(("read", "write")), rng.choice(PLAIN_VARS))
    if r < 0.55:
        return ("fence", rng.choice(("acq", "rel", "ar", "sc")))
    return random_atomic_op(rng, rng.choice(ATOMIC_VARS))


def random_atomic_op(rng: random.Random, x: str) -> tuple:
    kind = rng.choice(("ld", "ld", "st", "st", "rmw", "cas"))
    if kind == "ld":
        return ("ld", x, rng.choice(("rlx", "acq", "sc")))
    if kind == "st":
        return ("st", x, rng.randint(1, 2), rng.choice(("rlx", "rel", "sc")))
    if kind == "rmw":
        return ("rmw", x, rng.choice(("add", "xchg")), rng.randint(1, 2),
                rng.choice(("rlx", "acq", "rel", "ar", "sc")))
    succ = rng.choice(("rlx", "acq", "rel", "ar", "sc"))
    fail = rng.choice(("rlx", "acq", "sc") if succ in ("sc",) else ("rlx", "acq") if succ in ACQ else ("rlx",))
    return ("cas", x, rng.randint(0, 2), rng.randint(1, 2), succ, fail)


def random_sync_op(rng: random.Random) -> tuple:
    """An atomic access or a fence."""
    while True:
        op = random_op(rng)
        if op[0] not in ("read", "write"):
            return op


def random_program(rng: random.Random, max_events: int = 8) -> list[list[tuple]]:
    """Half the programs are free-form; the other half are message-passing shaped (plain
    accesses, then atomics and fences; atomics and fences, then plain accesses), where
    whether the plain accesses race depends on exactly which synchronisation is there."""
    nthreads = rng.choice((2, 2, 3))
    if rng.random() < 0.5:
        d = rng.choice(PLAIN_VARS)
        first = [(rng.choice(("write", "write", "read")), d)] + [random_sync_op(rng) for _ in range(rng.randint(1, 2))]
        second = [random_sync_op(rng) for _ in range(rng.randint(1, 2))] + [(rng.choice(("read", "write")), d)]
        threads = [first, second]
        if nthreads == 3:
            left = max(1, max_events - len(first) - len(second))
            threads.append([random_op(rng) for _ in range(rng.randint(1, left))])
        return threads
    total = rng.randint(nthreads + 1, max_events)
    sizes = [1] * nthreads
    for _ in range(total - nthreads):
        sizes[rng.randrange(nthreads)] += 1
    return [[random_op(rng) for _ in range(s)] for s in sizes]


def random_crowded_program(rng: random.Random) -> list[list[tuple]]:
    """5 to 8 readers of one plain location, each then publishing on its own flag; a last
    thread acquires most flags and writes the location: more accessors than a granule has
    cells, and a write ordered after all readers but a few (the shadow's overflow cells)."""
    n = rng.randint(5, 8)
    threads = [[("read", "d0"), ("st", "f%d" % i, 1, rng.choice(("rel", "rel", "sc", "rlx")))]
               for i in range(n)]
    acquired = rng.sample(range(n), n - rng.choice((1, 1, 2)))
    threads.append([("ld", "f%d" % i, rng.choice(("acq", "acq", "sc", "rlx"))) for i in acquired]
                   + [("write", "d0")])
    return threads


def random_crowded_atomic_program(rng: random.Random) -> list[list[tuple]]:
    """5 to 8 threads making atomic accesses of one location x (more accessors than a granule
    has cells: its atomic cells overflow), each then publishing on its own flag; sometimes one
    of them also makes a plain access of x among its atomics (a plain cell among atomic ones);
    a last thread acquires most flags and makes a plain access of x."""
    n = rng.randint(5, 8)
    threads = [[random_atomic_op(rng, "x") for _ in range(rng.randint(1, 3))]
               + [("st", "f%d" % i, 1, rng.choice(("rel", "rel", "sc", "rlx")))] for i in range(n)]
    if rng.random() < 0.5:
        t = rng.choice(threads)
        t.insert(rng.randrange(len(t)), (rng.choice(("read", "write")), "x"))
    acquired = rng.sample(range(n), n - rng.choice((0, 1, 1, 2)))
    threads.append([("ld", "f%d" % i, rng.choice(("acq", "acq", "sc", "rlx"))) for i in acquired]
                   + [(rng.choice(("read", "write")), "x")])
    return threads


# plain accesses of a shared 8-byte location in random_mixed_granule_program: the bytes of its
# atomic accesses (0-3), more, fewer, and others
MIXED_RANGES = ((0, 4), (0, 4), (0, 8), (4, 4), (0, 2), (2, 2), (0, 1), (3, 1))


def random_mixed_granule_program(rng: random.Random) -> list[list[tuple]]:
    """3 to 6 threads making atomic accesses of one location x (one granule) and one or two
    plain accesses of various bytes of it among them; each thread but the first starts by
    loading the flag the one before it (or, sometimes, an earlier one) releases at its end.
    Run in nearly sequential interleavings (ordered_schedules), the accesses are mostly
    ordered: cells ordered before later accesses that do or do not cover them (bytes, write,
    atomic), in granules with free cells and full ones, where one unordered pair decides
    whether x is racy."""
    n = rng.randint(3, 6)
    bodies = [[random_atomic_op(rng, "x") for _ in range(rng.randint(1, 2))] for _ in range(n)]
    for _ in range(1 if rng.random() < 0.7 else 2):
        body = rng.choice(bodies)
        off, size = rng.choice(MIXED_RANGES)
        body.insert(rng.randrange(len(body) + 1), (rng.choice(("read", "write")), "x", off, size))
    threads = []
    for i, body in enumerate(bodies):
        ops: list[tuple] = []
        if i:
            j = i - 1 if rng.random() < 0.8 else rng.randrange(i)
            ops.append(("ld", "f%d" % j, rng.choice(("acq", "acq", "sc", "rlx"))))
        ops += body
        ops.append(("st", "f%d" % i, 1, rng.choice(("rel", "sc"))))
        threads.append(ops)
    return threads


def all_schedules(threads: list[list[tuple]]) -> list[tuple]:
    """Every interleaving of the threads' ops (as thread indices)."""
    left = [len(t) for t in threads]
    out: list[tuple] = []
    acc: list[int] = []

    def rec() -> None:
        if not any(left):
            out.append(tuple(acc))
            return
        for i, c in enumerate(left):
            if c:
                left[i] -= 1
                acc.append(i)
                rec()
                acc.pop()
                left[i] += 1

    rec()
    return out


def random_schedules(rng: random.Random, threads: list[list[tuple]], count: int) -> list[tuple]:
    """Up to count distinct random interleavings."""
    return _distinct_schedules(threads, count, rng.choice)


def ordered_schedules(rng: random.Random, threads: list[list[tuple]], count: int,
                      p: float = 0.75) -> list[tuple]:
    """Up to count distinct interleavings that mostly run the threads in their order: each
    step runs the first unfinished thread with probability p, else a random one."""
    return _distinct_schedules(threads, count, lambda live: live[0] if rng.random() < p else rng.choice(live))


def _distinct_schedules(threads: list[list[tuple]], count: int, pick) -> list[tuple]:
    """Up to count distinct interleavings, each step's thread chosen by pick(unfinished)."""
    seen: set[tuple] = set()
    for _ in range(4 * count):
        left = [len(t) for t in threads]
        sched = []
        while any(left):
            k = pick([i for i, c in enumerate(left) if c])
            left[k] -= 1
            sched.append(k)
        seen.add(tuple(sched))
        if len(seen) == count:
            break
    return sorted(seen)


def random_spawn_join_program(rng: random.Random) -> list[list[tuple]]:
    """Main (thread 0) makes one or two accesses of x (plain, of various bytes, or atomic),
    spawns 4 to 6 threads, joins a few of them and may access x again; each thread but the
    first starts by loading the flag of the one before it (or, sometimes, an earlier one),
    makes one or two accesses of x (mostly plain reads) and releases its own flag. More
    accessors of x than a granule has cells, many of them ordered before every thread still
    running (main's accesses before the spawn; those of joined threads that the others
    acquired): the cells the race detector may drop from a full granule (race_floor.c), among
    cells it must keep."""
    def access() -> tuple:
        r = rng.random()
        if r < 0.2:
            return random_atomic_op(rng, "x")
        off, size = rng.choice(MIXED_RANGES)
        return ("read" if r < 0.75 else "write", "x", off, size)

    n = rng.randint(4, 6)
    main = [access() for _ in range(rng.randint(1, 2))] + [("spawn",)]
    main += [("join", k) for k in sorted(rng.sample(range(1, n + 1), rng.randint(1, n - 1)))]
    if rng.random() < 0.6:
        main.append(access())
    threads = [main]
    for i in range(1, n + 1):
        ops: list[tuple] = []
        if i > 1:
            j = i - 1 if rng.random() < 0.8 else rng.randrange(1, i)
            ops.append(("ld", "f%d" % j, rng.choice(("acq", "acq", "sc", "rlx"))))
        ops += [access() for _ in range(rng.randint(1, 2))]
        ops.append(("st", "f%d" % i, 1, rng.choice(("rel", "sc"))))
        threads.append(ops)
    return threads


def spawn_join_schedules(rng: random.Random, threads: list[list[tuple]], count: int,
                         p: float = 0.75) -> list[tuple]:
    """Up to count distinct interleavings of a spawn_join program: thread 0 up to its spawn
    first, a join only after the end of the thread it joins; otherwise mostly the threads in
    their order (the first runnable one with probability p, else a random runnable one)."""
    seen: set[tuple] = set()
    for _ in range(4 * count):
        left = [len(t) for t in threads]
        pos = [0] * len(threads)
        sched = []
        while any(left):
            spawned = any(op[0] == "spawn" for op in threads[0][:pos[0]])
            live = []
            for k in range(len(threads)):
                if not left[k] or (k and not spawned):
                    continue
                op = threads[k][pos[k]]
                if op[0] == "join" and left[op[1]]:
                    continue
                live.append(k)
            k = live[0] if rng.random() < p else rng.choice(live)
            left[k] -= 1
            pos[k] += 1
            sched.append(k)
        seen.add(tuple(sched))
        if len(seen) == count:
            break
    return sorted(seen)

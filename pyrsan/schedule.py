"""Schedule files and trace files of the controlled scheduler (docs/scheduling.md).

A *trace* is what the runtime wrote for one run (``trace_path=``): every scheduling point
with the thread chosen and the pending operation of every enabled thread. A *schedule* is
the list of chosen thread ids, the file ``schedule=`` makes the runtime follow. The driver
turns the trace of a run that reported into a schedule file, so ``pyrsan run --replay``
reproduces the report. Nothing here prints.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .errors import UsageError

SCHEDULE_MAGIC = "pyrsan-schedule 1"
TRACE_VERSION = 1



@dataclass(frozen=True)
class Op:
    """The pending operation of a thread at a scheduling point."""

    kind: str
    addr: str                 # hex string; "0x0" when none; for join the joinee's tid
    writes: bool


@dataclass(frozen=True)
class Step:
    """One scheduling point: the thread that ran and every enabled thread's pending op."""

    tid: int
    enabled: Mapping[int, Op]
    #: threads that yield (an unrecognised spin loop, docs/scheduling.md "Enabledness beyond the
    #: protocol text"): runnable, but chosen only when a schedule names them
    yielding: Mapping[int, Op] = field(default_factory=dict)
    #: the yielding threads whose loop counts (its header state has not come back): their
    #: repeats are not equivalent to none (docs/scheduling.md "Yielding threads in an exploration")
    counting: frozenset[int] = frozenset()

    @property
    def op(self) -> Op:
        return self.enabled[self.tid]


@dataclass(frozen=True)
class Trace:
    steps: tuple[Step, ...]
    end: str | None                 # "exit" | "deadlock" | "bound" | "handover"; None: crashed or killed
    diverged: int | None = None     # the step at which a replayed schedule stopped matching
    sched: str | None = None
    seed: int | None = None
    reason: str | None = None       # end "handover": "steps" (handover_steps) or "stall" (stall_ms)
    blocked: Mapping[int, Op] = field(default_factory=dict)   # threads the run ended with blocked: their pending op
    closure: Mapping[str, Any] | None = None   # sched_closure=1: the run's F-order closure (end line)

    @cached_property
    def decisions(self) -> tuple[int, ...]:
        # computed once per trace (the driver asks for it more than once per run); a frozen
        # dataclass keeps a cached_property in its __dict__
        return tuple([step.tid for step in self.steps])


#: Step lines already parsed, by the line as the runtime wrote it after its index (``, "tid":
#: ...``: the thread and every candidate's operation), and the operations named in them. A
#: Step does not hold its index, and an exploration's runs make the same steps at many
#: indices (peterson,3: 673 distinct lines without the index among 6,842 with it, in 65,187
#: lines of 3,000 runs), so most of a run's lines were seen in an earlier run; the Step objects
#: are immutable and shared. Bounded: cleared when full.
_STEP_CACHE: dict[str, "Step"] = {}
_STEP_HEAD = '{"step": '
_OP_CACHE: dict[tuple, Op] = {}
_STEP_CACHE_SIZE = 1 << 16


class TraceFormatError(ValueError):
    """A trace file that does not follow docs/scheduling.md."""


def parse_trace(lines: Iterable[str], known: Sequence[Step] = ()) -> Trace:
    """A trace from its JSON lines. A truncated last line (the program was killed while the
    runtime wrote it) is dropped; any other malformed line raises TraceFormatError.
    ``known``: the run's first steps, whose lines the runtime left out (the schedule's
    ``# trace_from: N``, N = len(known)); its first step line is then step N."""
    steps: list[Step] = list(known)
    header: dict = {}
    end: dict | None = None
    pending_error: str | None = None
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        if pending_error is not None:  # a bad line that was not the last one
            raise TraceFormatError(pending_error)
        if line.startswith(_STEP_HEAD):
            # '{"step": N, "tid": ...': N must be the next index; the rest is the cache's key
            comma = line.find(",", 9)
            key = line[comma:]
            cached = _STEP_CACHE.get(key)
            if cached is not None and line[9:comma] == str(len(steps)):
                steps.append(cached)
                continue
        else:
            key = None
        try:
            obj = json.loads(line)
        except ValueError:
            pending_error = f"line {number} is not JSON"
            continue
        if not isinstance(obj, dict):
            raise TraceFormatError(f"line {number} is not an object")
        if "pyrsan_trace" in obj:
            if obj["pyrsan_trace"] != TRACE_VERSION:
                raise TraceFormatError(f"unsupported trace version {obj['pyrsan_trace']!r}")
            header = obj
        elif "end" in obj:
            end = obj
        elif "step" in obj:
            step = _parse_step(obj, number, len(steps))
            if key is not None:
                if len(_STEP_CACHE) >= _STEP_CACHE_SIZE:
                    _STEP_CACHE.clear()
                _STEP_CACHE[key] = step
            steps.append(step)
        else:
            raise TraceFormatError(f"line {number}: neither header, step nor end")
    seed = header.get("seed")
    return Trace(
        steps=tuple(steps),
        end=str(end["end"]) if end else None,
        diverged=end.get("diverged") if end else None,
        sched=header.get("sched"),
        seed=int(seed) if isinstance(seed, (int, str)) and str(seed).isdigit() else None,
        reason=str(end["reason"]) if end and end.get("reason") is not None else None,
        blocked=_parse_ops(end.get("blocked", []) if end else [], "end"),
        closure=end["closure"] if end and isinstance(end.get("closure"), dict) else None,
    )


def _op(kind: Any, addr: Any, writes: Any) -> Op:
    key = (kind, addr, writes)
    op = _OP_CACHE.get(key)
    if op is None:
        if len(_OP_CACHE) >= _STEP_CACHE_SIZE:
            _OP_CACHE.clear()
        op = _OP_CACHE[key] = Op(str(kind), str(addr), bool(writes))
    return op


def _parse_ops(rows: Any, where: str) -> dict[int, Op]:
    """``[[tid, "kind", "addr", w], ...]``: each thread's pending operation."""
    try:
        return {int(tid): _op(kind, addr, writes) for tid, kind, addr, writes in rows}
    except (TypeError, ValueError) as exc:
        raise TraceFormatError(f"{where}: malformed operation list ({exc})") from None


def _parse_step(obj: dict, number: int, expected_index: int) -> Step:
    try:
        if obj["step"] != expected_index:
            raise TraceFormatError(f"line {number}: step {obj['step']}, expected {expected_index}")
        enabled = _parse_ops(obj["enabled"], f"line {number}")
        tid = int(obj["tid"])
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, TraceFormatError):
            raise
        raise TraceFormatError(f"line {number}: malformed step ({exc})") from None
    if tid not in enabled:
        raise TraceFormatError(f"line {number}: thread {tid} ran but is not listed as enabled")
    yielding = _parse_ops(obj["yielding"], f"line {number}") if obj.get("yielding") else {}
    if not yielding:
        return Step(tid, enabled)
    try:
        counting = frozenset(int(t) for t in obj.get("counting", ()))
    except (TypeError, ValueError) as exc:
        raise TraceFormatError(f"line {number}: malformed counting list ({exc})") from None
    return Step(tid, enabled, yielding, counting) if counting else Step(tid, enabled, yielding)


#: A read's size: an exploration's trace is a few KiB (os.read allocates the whole size first).
_READ = 1 << 16


def read_trace(path: str | os.PathLike, known: Sequence[Step] = ()) -> Trace:
    # read whole and split: a text file iterated line by line costs the driver more than the
    # parse of its (mostly cached) lines; os.read, not a buffered file object (one a run)
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        # a regular file reads short only at its end: one read for most traces
        data = os.read(fd, _READ)
        if len(data) == _READ:
            chunks = [data]
            while chunk := os.read(fd, _READ):
                chunks.append(chunk)
            data = b"".join(chunks)
    finally:
        os.close(fd)
    return parse_trace(data.decode("utf-8", "replace").split("\n"), known)


class Prefix(tuple):
    """A schedule prefix that also carries the steps its run will make before its last
    decision (``steps``: the explorer's, from the earlier runs through those states). A run
    of it writes its trace from step ``len(steps)`` on (``# trace_from``), and the trace is
    read back with ``steps`` in front (``read_trace(path, known)``): the same steps, without
    writing and parsing the prefix's lines in every run (docs/design/exploration.md §17)."""

    steps: tuple[Step, ...] = ()


def known_steps(prefix: Sequence[int]) -> tuple[Step, ...]:
    """The steps a run of ``prefix`` need not trace (``Prefix``), () for any other sequence."""
    return prefix.steps if isinstance(prefix, Prefix) else ()


def format_schedule(decisions: Sequence[int], comments: Mapping[str, object] = {},
                    sleep: Mapping[int, Op] = {}, trace_from: int = 0) -> str:
    """The text of a schedule file: magic line, ``# name: value`` comments, the sleep set at
    the end of the prefix (``# sleep: T kind addr w``, docs/scheduling.md "Sleep set"), then the
    tids (twenty per line, so long schedules stay readable). ``trace_from``: the run's trace
    leaves out the lines of its steps before it (``# trace_from: N``; readers that do not know
    it take it for a comment)."""
    lines = [SCHEDULE_MAGIC]
    lines += [f"# {name}: {value}" for name, value in comments.items()]
    if trace_from:
        lines.append(f"# trace_from: {trace_from}")
    # an await step names several words, which the runtime's sleep lines cannot: it is left out
    # (the runtime may then run it, and the explorer cuts that run as sleep-blocked)
    lines += [f"# sleep: {tid} {op.kind} {op.addr} {int(op.writes)}" for tid, op in sorted(sleep.items())
              if op.kind != "await"]
    for start in range(0, len(decisions), 20):
        lines.append(" ".join(map(str, decisions[start:start + 20])))
    return "\n".join(lines) + "\n"


def write_schedule(path: str | os.PathLike, decisions: Sequence[int],
                   comments: Mapping[str, object] = {}, sleep: Mapping[int, Op] = {},
                   trace_from: int = 0) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(format_schedule(decisions, comments, sleep, trace_from), encoding="utf-8")


def parse_schedule(text: str, name: str = "schedule") -> tuple[int, ...]:
    """The decisions of a schedule file; UsageError (one line) when it is not one."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != SCHEDULE_MAGIC:
        raise UsageError(f"{name}: not a pyrsan schedule file (first line must be '{SCHEDULE_MAGIC}')")
    decisions = []
    for number, line in enumerate(lines[1:], 2):
        if line.lstrip().startswith("#"):
            continue
        for word in line.split():
            if not word.isdigit():
                raise UsageError(f"{name}:{number}: '{word}' is not a thread id")
            decisions.append(int(word))
    return tuple(decisions)


def read_schedule(path: str | os.PathLike) -> tuple[int, ...]:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read schedule {path}: {exc.strerror or exc}") from None
    return parse_schedule(text, str(path))

"""Await loops: waiting loops over several locations, with SC fences (issue 15).

spinloops.py turns a loop that re-reads *one* location into a wait. Mutual-exclusion waiting
loops read several (Peterson's filter lock: every other thread's level, then the victim; the
bakery: a ticket compared with `<`) with SC fences between the reads, and the runtime saw each
of their iterations as new steps: their re-reads were most of the explorations' races
(docs/design/exploration.md §5-§6). This pass marks such loops so that the scheduler can stop
a thread whose iterations only repeat themselves (§7 has the rule and why it is exact):

    while (others_at_or_above(me, l) && (fence(), load(&victim[l])) == me)   marked
        ;

Runs on the IR after the atomics are rewritten (atomics.py), on the loops spinloops.py left
alone. A natural loop is marked when every instruction of the blocks of its *write-free
iterations* (`pure_iterations`: the blocks reachable from the header and reaching its back
edges without passing a block that calls `__rsan_store_N`, `__rsan_rmw_N` or `__rsan_cas_N`;
every block of a loop without such a call) is

- a call of `__rsan_load_{1,2,4,8}` (an atomic load, any order) or `__rsan_fence` with order
  seq_cst (an SC fence): the only effects an iteration may have;
- pure computation on SSA values: arithmetic, comparisons, casts, selects, address
  arithmetic (getelementptr), phis, branches and switches;
- a debug or lifetime intrinsic;

and its header's phis (the values one iteration hands the next) are at most MAX_STATE
integers or pointers. No store (not even to a stack slot), no plain load (its memory could
hold what an earlier iteration left there), no other call, no RMW, CAS, atomic store, wait or
BCAS, no invoke on those blocks. So a write-free iteration is a function of its header's phis, of
values defined before the loop, and of the values its atomic loads return, and it changes
nothing but the monitor's clocks (what its loads and fences do there is §7's business). An
iteration that passes a written block (Dekker's loop: `if (turn != me) { flag = 0; wait; flag =
1; }`) makes a store, RMW or CAS step, at which the runtime leaves the loop's instance
(sched_await.c `rsan_await_chosen`); the next arrival at the header starts a new one, so such
an iteration is never compared (docs/design/exploration.md §22).

Of nested marked loops one is marked (an inner loop's phis start again at each outer
iteration): the outermost, unless it has written blocks or counts without loading outside its
inner loops (`select_nested`). The mark: a phi at the header that is 0 on the edges from outside the loop
and 1 on its back edges, plus 2 on every edge when a branch that can leave the loop decides on a
value computed from the header's phis (the loop may end by its own count:
`exits_depend_on_state`; the runtime's "counting", sched_await.c), plus 4 on every edge of a loop
that a counting loop gave way to (`select_nested`), plus 8 on every edge of a loop with written
blocks (the runtime takes it under blocked iterations only), and a call at the header after
its phis,

    call void @__rsan_await_head(i64 LOOP, i32 %from_inside, i64 s0, i64 s1, i64 s2)

with the header's phis as i64 (zero-extended, pointers as integers; unused ones 0). The runtime
(runtime/src/sched_await.c) takes an arrival from outside as a new instance of the loop, and an
arrival from inside with the same phi values as that first one as the end of one iteration and
the start of the next: then the thread's local state is the same as at the instance's start.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass

from .model import IRFunction, IRModule
from .spinloops import _LABEL_RE, _Function

ENV_OFF = "PYRSAN_NO_AWAIT_LOOPS"
MAX_STATE = 3
MAX_BLOCKS = 40
HEAD = "__rsan_await_head"

_NAME = r'%[-\w.$]+|%"[^"]*"'
_LOAD_CALL_RE = re.compile(r'^  (?:%s) = (?:notail |tail )?call i64 @__rsan_load_(?:1|2|4|8)\(' % _NAME)
_FENCE_CALL_RE = re.compile(r'^  (?:notail |tail )?call void @__rsan_fence\(i32 5, ')
_INTRINSIC_RE = re.compile(r'^  (?:notail |tail )?call void @llvm\.(?:dbg\.\w+|lifetime\.(?:start|end)\.\w+)\(')
_PURE_RE = re.compile(
    r'^  (?:%s) = (?:add|sub|mul|udiv|sdiv|urem|srem|shl|lshr|ashr|and|or|xor|icmp|select|zext|sext|trunc|'
    r'freeze|getelementptr|ptrtoint|inttoptr|bitcast|extractvalue|insertvalue|phi)\b' % _NAME)
_TERM_RE = re.compile(r'^  (?:br |switch |unreachable)')
_PHI_RE = re.compile(r'^  (%s) = phi (i1|i8|i16|i32|i64|ptr) ' % _NAME)
_ANY_PHI_RE = re.compile(r'^  (?:%s) = phi ' % _NAME)


def enabled_by_default() -> bool:
    return os.environ.get(ENV_OFF, "") in ("", "0")


@dataclass(frozen=True)
class AwaitLoop:
    function: str
    header: str
    blocks: int
    state: tuple[str, ...]      # the header's phis handed to the runtime


def _pure_line(text: str) -> bool:
    return bool(_LOAD_CALL_RE.match(text) or _FENCE_CALL_RE.match(text) or _INTRINSIC_RE.match(text)
                or _PURE_RE.match(text) or _TERM_RE.match(text))


_VALUE_RE = re.compile(r'%[-\w.$]+|%"[^"]*"')
_DEF_RE = re.compile(r'^  (%[-\w.$]+|%"[^"]*") = ')
_BR_RE = re.compile(r'^  br i1 (%[-\w.$]+|%"[^"]*"), ')
_SWITCH_RE = re.compile(r'^  switch \w+ (%[-\w.$]+|%"[^"]*"), ')


def exits_depend_on_state(info: _Function, body: set[str], phis: list[tuple[str, str]]) -> bool:
    """Some branch or switch of the loop that can leave it decides on a value computed in the
    loop from a header phi (through arithmetic, phis, selects, or a load's address): the loop
    can end by its own count. Over-approximated: any operand chain reaching a header phi."""
    state = {name for name, _ in phis}
    defs: dict[str, str] = {}
    exits: list[str] = []
    for name in body:
        block = info.by_name[name]
        for _, text in block.lines:
            m = _DEF_RE.match(text)
            if m:
                defs[m.group(1)] = text
        if any(succ not in body for succ in info.edges.get(name, ())):
            for _, text in block.lines:
                m = _BR_RE.match(text) or _SWITCH_RE.match(text)
                if m:
                    exits.append(m.group(1))
    seen: set[str] = set()
    work = list(exits)
    while work:
        value = work.pop()
        if value in state:
            return True
        if value in seen or value not in defs:
            continue
        seen.add(value)
        text = defs[value]
        work += _VALUE_RE.findall(text.split("=", 1)[1])
    return False


_WRITE_CALL_RE = re.compile(
    r'^  (?:(?:%s) = )?(?:notail |tail )?call [^@]*@__rsan_(?:store|rmw|cas)_(?:1|2|4|8)\(' % _NAME)


@dataclass
class _Candidate:
    header: str
    body: set[str]
    phis: list[tuple[str, str]]
    counting: bool      # exits_depend_on_state: it may end by its own count
    impure: bool        # some path of it stores, calls... (its pure iterations are marked)
    loads: set[str]     # the blocks of it that load an atomic
    nested_count: bool = False


def pure_iterations(info: _Function, header: str, body: set[str]) -> set[str] | None:
    """The blocks of the iterations that make no atomic write: those reachable from the header
    and reaching its back edges without passing a block that calls `__rsan_store_N`,
    `__rsan_rmw_N` or `__rsan_cas_N`. None when such an iteration has a line that is not pure
    (an effect the runtime does not see: a plain access, another call) or there is none.

    An iteration that passes a written block makes a store, RMW or CAS step, which the runtime
    sees (sched_await.c `rsan_await_chosen`: any step other than a load or an SC fence leaves
    the loop's instance; the next arrival at the header starts a new one), so only the
    iterations of these blocks are compared, and they are functions of the header's phis, of
    values defined before the loop and of their loads as in a loop that is pure throughout
    (a value defined in a written block reaches them only through a header phi: they reach
    their uses from the header without passing it)."""
    written = {name for name in body
               if any(_WRITE_CALL_RE.match(text) for _, text in info.by_name[name].lines)}
    if header in written:
        return None
    free = body - written
    reach = {header}
    todo = [header]
    while todo:
        for succ in info.edges.get(todo.pop(), ()):
            if succ in free and succ not in reach and succ != header:
                reach.add(succ)
                todo.append(succ)
    back = {p for p in info.preds.get(header, ()) if p in reach}
    if not back:
        return None
    returns = set(back)
    todo = list(back)
    while todo:
        for pred in info.preds.get(todo.pop(), ()):
            if pred in reach and pred not in returns:
                returns.add(pred)
                todo.append(pred)
    blocks = reach & returns
    if not all(_pure_line(text) for name in blocks for _, text in info.by_name[name].lines):
        return None
    return blocks


def find_await_loops(fn: IRFunction) -> list[tuple[str, set[str], list[tuple[str, str]]]]:
    """(header, blocks, header phis as (name, type)) of each loop to mark (outer ones first)."""
    return [(c.header, c.body, c.phis) for c in _await_candidates(fn)]


def _await_candidates(fn: IRFunction) -> list[_Candidate]:
    if not any("@__rsan_load_" in text for text in fn.lines):
        return []
    info = _Function(fn)
    found: list[_Candidate] = []
    for header, body in info.natural_loops_by_header().items():
        if "" in body or len(body) > MAX_BLOCKS:
            continue
        blocks = pure_iterations(info, header, body)
        if blocks is None:
            continue
        lines = [text for name in blocks for _, text in info.by_name[name].lines]
        if not any(_LOAD_CALL_RE.match(text) for text in lines):
            continue
        phis: list[tuple[str, str]] = []
        typed = True
        for _, text in info.by_name[header].lines:
            if not _ANY_PHI_RE.match(text):
                break
            m = _PHI_RE.match(text)
            if not m:
                typed = False
                break
            phis.append((m.group(1), m.group(2)))
        if not typed or len(phis) > MAX_STATE:
            continue
        impure = blocks != body
        loads = {name for name in body if any("@__rsan_load_" in text for _, text in info.by_name[name].lines)}
        found.append(_Candidate(header, body, phis, exits_depend_on_state(info, body, phis), impure, loads))
    return select_nested(found)


def select_nested(found: list[_Candidate]) -> list[_Candidate]:
    """Of nested candidates one is marked (the runtime follows one instance a thread): the
    outermost, except that a candidate gives way to the candidates inside it

    - when it is impure: its iterations through the inner loops would not end while those spin
      (the inner loops park; before this they were the only candidates);
    - when it counts and loads nothing outside them (`for (j = 1; j <= N; j++) while ((fence(),
      load(&b[j])) != 0);`, Lamport's fast mutex): its iterations never repeat, and marked it made
      the inner spins yields. The inner loops are marked `nested_count` (bit 2 of the mark): the
      runtime counts each of their instances as an arrival at a header of a counting loop, so
      that a thread that yields on re-reads made across their instances (their first
      iterations', the only ones that count as yields) is counting, as it was in the outer loop
      (docs/scheduling.md "Counting loops": a repeat there changes when the outer loop ends)."""
    found = sorted(found, key=lambda c: -len(c.body))
    chosen: list[_Candidate] = []
    for c in found:
        if any(c.body < o.body for o in chosen):
            continue
        inner = [o for o in found if o.body < c.body]
        if inner:
            covered = set().union(*(o.body for o in inner))
            if c.impure:
                continue
            if c.counting and not (c.loads - covered):
                for o in inner:
                    o.nested_count = True
                continue
        chosen.append(c)
    return chosen


def _loop_id(module_id: str, fn: IRFunction, header: str) -> int:
    digest = hashlib.sha256(("%s\0%s\0%s" % (module_id, fn.header, header)).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1 or 1      # a positive i64, never 0


def mark_await_loops(module: IRModule, module_id: str, found: list[AwaitLoop] | None = None) -> IRModule:
    for fn in module.functions():
        loops = _await_candidates(fn)
        if not loops:
            continue
        info = _Function(fn)
        edits: dict[int, list[str]] = {}
        for loop in loops:
            header, body, phis = loop.header, loop.body, loop.phis
            block = info.by_name[header]
            label = header[1:].strip('"')
            label_at = next((i for i, text in enumerate(fn.lines)
                             if (m := _LABEL_RE.match(text)) and m.group(1).strip('"') == label), None)
            if label_at is None or not block.lines:
                continue
            preds = info.preds.get(header, ())
            if not preds:
                continue
            inside = module.fresh()
            # bit 0: an arrival from inside; bit 1: the loop's exits depend on its header values
            # (it may end by its own count: the runtime's "counting", sched_await.c); bit 2: it
            # lies in a counting loop left unmarked for it (select_nested); bit 3: some path of
            # it writes (the runtime takes it under blocked iterations only)
            bounded = 2 * int(loop.counting) + 4 * int(loop.nested_count) + 8 * int(loop.impure)
            incoming = ", ".join("[ %d, %s ]" % (int(p in body) + bounded, p or info.entry_name) for p in preds)
            first = next(i for i, text in block.lines if not _ANY_PHI_RE.match(text))
            if label_at in edits or first in edits:
                continue
            edits[label_at] = [fn.lines[label_at], "  %s = phi i32 %s" % (inside, incoming)]
            args = []
            pre = []
            for name, ty in phis:
                if ty == "i64":
                    args.append(name)
                    continue
                v = module.fresh()
                pre.append("  %s = %s %s %s to i64" % (v, "ptrtoint" if ty == "ptr" else "zext", ty, name))
                args.append(v)
            args += ["0"] * (MAX_STATE - len(args))
            call = "  notail call void @%s(i64 %d, i32 %s, %s)" % (
                HEAD, _loop_id(module_id, fn, header), inside, ", ".join("i64 %s" % a for a in args))
            edits[first] = pre + [call, fn.lines[first]]
            module.used.add(HEAD)
            if found is not None:
                found.append(AwaitLoop(fn.header, header, len(body), tuple(n for n, _ in phis)))
        fn.apply(edits)
    return module

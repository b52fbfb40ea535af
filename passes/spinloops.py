"""Spin-loop recognition (the RSAN paper, §4.3, leaves it to future work).

A loop whose only effect is re-reading one atomic location until it holds a value is a
wait; a loop that retries one compare-exchange with constant operands until it succeeds is a
BCAS. Failed iterations of such a loop change nothing (RSAN paper §4.3: failed attempts of a
wait / BCAS create no events), so the analysis may drop them:

    while (atomic_load(&f) != 1);          wait(f == 1)
    while (!atomic_load(&f));              wait(f != 0)   (also do {} while, and == 0)
    while (!atomic_compare_exchange_strong(&x, &e, 1)) e = 0;     BCAS(x: 0 -> 1) (weak too)

The recognition works on the IR shape, at -O1 (a one-block self-loop) and -O0 (the value
goes through a stack temporary, the loop body is a block of its own, `!` is an `xor`): the
loop region (the blocks on a cycle through the atomic instruction's block) is executed
symbolically, with the value read as the one unknown, and every path is either a back edge
or an exit together with what it assumes about that value (or about the CAS outcome).

Soundness (why a loop is recognised, and what is left alone):
- The region may contain the one atomic instruction, branches, comparisons of the value with
  constants, `!` (xor with true), i1 <-> integer casts, a bool's test (`trunc` to i1 of a
  byte read), the 64-bit value read as a pointer and back (`std::atomic<T*>`, compared with
  null or a pointer fixed before the loop), loads / stores of the function's
  own stack slots that never escape (clang -O0 temporaries; race hooks on them do not count
  as an escape), and what backoff.py calls inert (pause hints, yields, sleeps and their
  timespec on the stack, race hooks). Anything else (another atomic, a plain access to other
  memory, another call, a volatile access) is an effect of a failed iteration, and the loop
  is left alone.
- A back-off counter (`if (++spins > 8) sched_yield();`, `delay *= 2`): arithmetic and
  phis on values no read gave are counter values; a branch on one is followed both ways (so
  an exit that depends on it makes the exits disagree, and the loop is left alone); a
  counter may change from one iteration to the next only when no code after the loop uses
  it (no SSA use outside the loop, no load of its slot after it) and the value read is never
  compared with it (its slot is walked again with an unknown entry value). So a counter only
  decides which inert calls a failed iteration makes. A head phi that carries a value read
  into the next iteration (the failed CAS's pair, when `e` stays a slot) is a counter there,
  and the loop is left alone if the code after it reads a slot that the last iteration set
  from such a counter.
- A stack slot written in the loop must either hold at every back edge the value it held on
  entry (the CAS expected value `e = 0` at -O0, whose entry value is the constant the block
  before the loop stores), or never be read before it is written in an iteration and be
  either used only inside the loop (a temporary) or written again on every exit path (`v` in
  `while ((v = atomic_load(&f)) == 0);`). So a failed iteration leaves nothing behind.
- The location must be the same on every iteration: a global, a member or element of one at
  constant indices (a constant `getelementptr` expression: `&lock.now_serving`, `&arr[2]`), a
  value defined before the loop, a load of a slot that every store sets to one such value
  (`this` at -O0), or a `getelementptr` instruction at constant indices from one of these
  (clang -O0's `&p->b`: pure, it reads and writes nothing). Before session 16 only a global or
  an SSA name was taken, so a ticket lock's wait on `&l->now_serving` of a global lock was
  analysed as written and its failed reads reported.
- clang -O0's std::atomic: libstdc++'s constexpr order helpers are evaluated (an invoke takes
  its normal edge: they cannot throw) and a switch over a constant order takes that case;
  the other cases' atomic instructions are never reached and stay plain hooks. Accessors clang
  -O0 does not inline (`std::atomic<T*>::load`, a C helper) are inlined first (inline_o0.py).
  An iteration is walked from the loop's header, so the orders and operands an inlined
  accessor stores before its switch are known where the instruction reads them; accesses
  through a slot that holds another slot's address (a reference parameter, a result buffer)
  are that slot's (slot_refs.py). Such a loop may be larger (MAX_INLINED_REGION_BLOCKS).
- A value fixed before the loop may also be computed in each iteration from such values
  (`load(&seq) != s + 1` at -O0): the rewrite computes it again where the loop reads.
- Other atomics are told by their opcode (a name such as `%"struct.std::atomic"` or a block
  named after an inlined member holds the word).
- A wait needs the exit condition of every exit to be "the value equals C" (`__rsan_spin_load_N`, as
  the RSAN paper's wait(x = C)) or "the value differs from C" (`__rsan_spin_load_ne_N`). The
  latter is checked exactly: the successful read reads some value other than C, so it may be
  stale iff a write of another value lies in [Tc(x), Tsc(x)) (algorithm.md §4's read check of
  a failing strong CAS). Any other exit condition (two constants, `<`, a value from
  elsewhere) is left alone: it is not a wait for one value.
- Some bits of the value read (`(v & 0xffff) != t`, `v >> 16`, a cast to a narrower type, a
  status bit `v & 4`: `and` with a constant, `lshr` by one, `trunc`, `zext`, spinvalues.py
  masked()) compared with a constant or a fixed value: a wait for `(x & m) == c << s`
  (`__rsan_spin_load_mask_N`, `_ne_`), exact: a constant that the bits cannot hold never
  matches, and a fixed value is shifted in 64 bits only when it cannot overflow. One compared
  key per loop (two bit fields, the two halves of one read, `ashr`, `sext`, `add` on the read:
  left alone).
- A path that has made the read and then reaches an effect (another atomic, a call, shared
  memory) ends the wait there, as an exit does: a TTAS lock whose test loop -O2 merges with
  the exchange (`while (1) { while (load(&l)); if (!xchg(&l, 1)) break; }`) waits for l == 0,
  and the exchange stays as written. Only with nothing carried between iterations (no phi at
  the header, no stack slot: the code after the effect comes back to the header), and only
  after the read: an effect before it is made by every iteration.
- An x86 `mov` from memory in inline asm (asm.py asm_load: an acquire load, Concurrency Kit's
  `ck_pr_load_*` in its default mode) is a read like an atomic load; rewrite_asm makes it the
  spin load (the placeholder SPIN_ASM_PLACEHOLDER carries it there, so that its site is
  numbered with the other asm sites).
- Signed views of some bits (`(short)(v >> 16) != -1`, `((int)v >> 24) == -2`: `sext`, `ashr`
  by a constant) compared with == / != (spinsigned.py): a sign-extension is injective, so the
  comparison is the masked wait on the unsigned bits, or constant when the constant lies
  outside the bits' signed range. Compared with a value of full width fixed before the loop,
  with an ordered comparison, or after more arithmetic: left alone.
- The rule every recognised loop keeps: a failed attempt writes nothing that outlives it
  (the slot rules above) and the exit is decided by the wait's value alone. The walk starts at
  the loop's header; when that fails and the read lies deeper, the walk starts again at the
  read's own block (an attempt is "from one read to the next"): clang -O0's CK ticket lock
  compares at the header a slot that the entry sets from the fetch-and-add and each iteration
  sets from the read (`while (pos != t) { pause; pos = load(&w) & 0xffff; }`). From the read,
  the slot is written before it is read, so it is a temporary of the attempt, and the header's
  test is the attempt's exit test; the header's first test, made before any read with what the
  entry stored, runs as written. Only when the read's block has no phi (a value handed on by
  the previous attempt), and a value the loop computes that the walk meets before it defines
  it (the header's, from the previous attempt) ends the recognition, and so does any effect
  on that walk (the header's code, met after the read, is made by every attempt).
- The address must be the same on every attempt: a wait whose address each attempt computes
  again from plain memory (CK's anderson lock re-reads `lock->slots`, the asm's memory
  clobber) is left alone: a failed attempt disables its thread until its word is written
  (sched.c), so a change of the address's source alone would leave it waiting on the old word.
- A CAS loop needs expected and desired values fixed before the loop (constants, or as for a
  wait: `owner.compare_exchange_weak(e, me)`) on every iteration and the exit
  condition "the CAS succeeded" exactly (a loop that also leaves on the old value read is left
  alone). It becomes one blocking BCAS (`__rsan_bcas_N`, its success order; the failure
  order never matters since failed attempts create no events), whose result is the success
  pair {expected, true}; the loop then leaves at once.
"""
from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass

from . import backoff, slot_refs
from .asm import asm_load
from .spinvalues import (FALSE, TRUE, NotALoop, compare, fixed, literal, mask_op, masked, mentions,
                         negate, narrow, on_read, signed)
from .spinsigned import ashr_of, compare_signed, is_signed_view, sext_of
from .casloops import analyse as analyse_cas, find_cas_loops, find_retry_cas
from .model import IRFunction

ENV_OFF = "PYRSAN_NO_SPIN_LOOPS"

MAX_REGION_BLOCKS = 12
# a loop whose atomic instruction is not in its header (an inlined -O0 accessor: a switch
# over the memory orders, each case its own copy of the instruction) may be larger: its walk
# follows only the cases its constant orders select, and stops after MAX_WALK_BLOCKS blocks
MAX_INLINED_REGION_BLOCKS = 80
MAX_WALK_BLOCKS = 2000
MAX_PATH_BLOCKS = 24

# `1:                                                ; preds = %1, %0`   `"while.cond":`
_LABEL_RE = re.compile(r'^("[^"]+"|[-\w.$]+):')
_NAME = r'%[-\w.$]+|%"[^"]*"'
_GLOBAL = r'@[-\w.$]+|@"[^"]*"'
# a member or element of a global at constant indices, as a constant expression:
# `getelementptr inbounds nuw (i8, ptr @lock, i64 4)`, `getelementptr inbounds ([4 x i32], ptr @a, i64 0, i64 2)`
_GEP_FLAGS = r'(?:(?:inbounds|nuw|nusw|inrange\(-?\d+, ?-?\d+\)) )*'
_CONST_GEP = r'getelementptr %s\([^(),]+, ptr (?:%s)(?:, i\d+ -?\d+)*\)' % (_GEP_FLAGS, _GLOBAL)
_PTR = r'%s|%s|%s' % (_GLOBAL, _CONST_GEP, _NAME)
# `  %2 = load atomic i32, ptr @f acquire, align 4`
_ATOMIC_LOAD_RE = re.compile(
    r'^  (%s) = load atomic (i8|i16|i32|i64), ptr (%s) (\w+), align' % (_NAME, _PTR))
# `  %7 = cmpxchg weak ptr @x, i32 %5, i32 %6 acquire monotonic, align 4`
_CMPXCHG_RE = re.compile(
    r'^  (%s) = cmpxchg (weak )?ptr (%s), (i8|i16|i32|i64) ([^,]+), '
    r'(i8|i16|i32|i64) (\S+) (\w+) (\w+), align' % (_NAME, _PTR))
# `  %6 = getelementptr inbounds nuw %struct.S, ptr %5, i32 0, i32 1` (constant indices: the
# member of a structure whose address is the same on every iteration, clang -O0's `&p->b`)
_GEP_RE = re.compile(r'^  (%s) = getelementptr (?:(?:inbounds|nuw|nusw) )*[^,]+, ptr (%s)((?:, i\d+ -?\d+)*)$'
                     % (_NAME, _NAME))
# `  store i32 %3, ptr %1, align 4`
_STORE_RE = re.compile(r'^  store (i1|i8|i16|i32|i64|ptr) ([^,]+), ptr (%s), align' % _NAME)
# `  %4 = load i32, ptr %1, align 4`
_LOAD_RE = re.compile(r'^  (%s) = load (i1|i8|i16|i32|i64|ptr), ptr (%s), align' % (_NAME, _NAME))
# `  %5 = icmp ne i32 %4, 1`
_ICMP_RE = re.compile(r'^  (%s) = icmp (eq|ne) (i1|i8|i16|i32|i64|ptr) ([^,]+), (\S+)$' % _NAME)
# `  %6 = xor i1 %5, true`
_XOR_RE = re.compile(r'^  (%s) = xor i1 (\S+), (\S+)$' % _NAME)
# `  %12 = zext i1 %9 to i8`   `  %14 = trunc i8 %13 to i1`   `  %6 = sext i8 %5 to i32`
_CAST_RE = re.compile(r'^  (%s) = (zext|sext|trunc) (?:nneg |nuw |nsw )*(i1|i8|i16|i32|i64) (\S+) '
                      r'to (i1|i8|i16|i32|i64)$' % _NAME)
# `  %4 = inttoptr i64 %3 to ptr`   `  %5 = ptrtoint ptr %4 to i64`
_PTRCAST_RE = re.compile(r'^  (%s) = (?:inttoptr i64|ptrtoint ptr) (\S+) to (?:ptr|i64)$' % _NAME)
# `  %9 = extractvalue { i32, i1 } %7, 1`
_EXTRACT_RE = re.compile(r'^  (%s) = extractvalue \{ (?:i8|i16|i32|i64), i1 \} (\S+), ([01])$'
                         % _NAME)
# `  br i1 %5, label %6, label %7, !llvm.loop !6`   `  br label %2`
_BR_COND_RE = re.compile(r'^  br i1 (\S+), label (%s), label (%s)$' % (_NAME, _NAME))
_BR_RE = re.compile(r'^  br label (%s)$' % _NAME)
# `  switch i32 %11, label %12 [ i32 1, label %14 i32 2, label %14 i32 5, label %16 ]`
_SWITCH_RE = re.compile(r'^  switch (i\d+) (\S+), label (%s) \[(.*)\]$' % _NAME)
_CASE_RE = re.compile(r'i\d+ (-?\d+), label (%s)' % _NAME)
# `  %9 = invoke noundef i32 @f(i32 noundef %8, i32 noundef 65535) to label %10 unwind label %18`
_INVOKE_RE = re.compile(r'^  (?:(%s) = )?invoke (.*) to label (%s) unwind label (%s)$' % (_NAME, _NAME, _NAME))
# libstdc++'s constexpr helpers on memory orders, which clang -O0 calls from every std::atomic
# member: std::operator&(memory_order, __memory_order_modifier), __cmpexch_failure_order
_ORDER_HELPER_RE = re.compile(r'^(?:[\w()]+ )*i32 @(_ZStanSt12memory_orderSt23__memory_order_modifier|'
                              r'_ZSt23__cmpexch_failure_orderSt12memory_order|'
                              r'_ZSt24__cmpexch_failure_order2St12memory_order)\((.*)\)(?: #\d+)?$')
# `  %1 = alloca i32, align 4`
_ALLOCA_RE = re.compile(r'^  (%s) = alloca ' % _NAME)
# `  %.06 = phi i32 [ %.1, %6 ], [ 0, %0 ]`
_PHI_RE = re.compile(r'^  (%s) = phi (?:i1|i8|i16|i32|i64|ptr|\{ (?:i8|i16|i32|i64), i1 \}) (.*)$' % _NAME)
_INCOMING_RE = re.compile(r'\[ ([^,\]]+), (%s) \]' % _NAME)
# arithmetic a back-off counter may do (never on the value read)
# `  %8 = add nsw i32 %7, 1`: arithmetic that computes a value fixed before the loop again
_FIXED_ARITH_RE = re.compile(r'^  (%s) = ((?:add|sub|mul|shl|and|or|xor)(?: nuw| nsw| disjoint)*) (i8|i16|i32|i64) '
                             r'([^,]+), (\S+)$' % _NAME)
# `  %7 = and i32 %6, 65535`   `  %4 = lshr i32 %3, 16`: some bits of the value read
_MASK_RE = re.compile(r'^  (%s) = (and|lshr(?: exact)?) (i8|i16|i32|i64) ([^,]+), (\S+)$' % _NAME)
# `  %5 = ashr i32 %4, 16`: the top bits of the value read, sign-extended (spinsigned.py)
_ASHR_RE = re.compile(r'^  (%s) = ashr(?: exact)? (i8|i16|i32|i64) ([^,]+), (-?\d+)$' % _NAME)
_ARITH_RE = re.compile(r'^  (%s) = (add|sub|mul|udiv|sdiv|urem|srem|shl|lshr|ashr|and|or|xor|icmp|select|'
                       r'zext|sext|trunc|freeze)\b(.*)$' % _NAME)
_TRAILER_RE = re.compile(r'(?:, (?:!dbg|!llvm\.loop|!\w[\w.]*) ![0-9]+)+$')
_LABEL_REF_RE = re.compile(r'\blabel (%s)' % _NAME)
# an atomic or volatile instruction (by its opcode: a name may hold the word, `%_ZNSt6atomicIb...`)
_OTHER_ATOMIC_RE = re.compile(r'^  (?:(?:%s) = )?(?:(?:load|store) (?:atomic|volatile)\b|cmpxchg\b|atomicrmw\b|fence\b|'
                              r'call [^@]*@llvm\.mem(?:cpy|move|set)[^(]*\(.*, i1 true\))' % _NAME)


class _Effect(NotALoop):
    """An instruction a failed iteration must not make (another atomic, a call, shared
    memory). On a path that has made the loop's read it ends the wait instead (_walk)."""


# the walk's marker (an env key no SSA name can be) that the path has made the loop's read
_READ = "<read>"


def enabled_by_default() -> bool:
    return os.environ.get(ENV_OFF, "") in ("", "0")


@dataclass(frozen=True)
class LoopMatch:
    """What a recognised loop's atomic instruction (body line `index`) becomes.
    kind "wait": wait for `value` (negated: for any other value); "bcas": value -> desired;
    "casloop_load" / "casloop_cas": the first read / an attempt of a CAS retry loop that is
    an atomic read-modify-write (casloops.py); "cas_retry": a compare-exchange left as it is
    whose failure only feeds a retry (its site says so); `listed`: the instruction the loop
    is listed at."""
    index: int
    kind: str
    value: int | tuple
    desired: int | tuple = 0
    negated: bool = False
    listed: bool = True
    location: str = ""      # the global the loop is on when its pointer resolves to one (-v)


@dataclass
class _Block:
    name: str                           # `%1`, `%"while.cond"`; the entry block: ""
    lines: list[tuple[int, str]]        # (body index, instruction text without metadata)
    succs: tuple[str, ...]


def _blocks(fn: IRFunction) -> list[_Block]:
    blocks: list[_Block] = []
    cur = _Block("", [], ())
    for i, text in enumerate(fn.lines):
        m = _LABEL_RE.match(text)
        if m:
            if cur.name or cur.lines:   # an entry block with a label (`.preheader:` at -O2) is one block
                blocks.append(cur)
            cur = _Block("%" + m.group(1), [], ())
            continue
        stripped = text.strip()
        if not stripped or stripped.startswith((";", "#dbg_")):
            continue
        if (text.startswith("   ") or stripped.startswith("]")) and cur.lines:   # continuation line
            j, prev = cur.lines[-1]
            cur.lines[-1] = (j, _TRAILER_RE.sub("", prev + " " + stripped.rstrip()))
            continue
        cur.lines.append((i, _TRAILER_RE.sub("", text.rstrip())))
    blocks.append(cur)
    for b in blocks:
        refs = []
        for _, text in b.lines[-1:]:
            refs = _LABEL_REF_RE.findall(text)
        b.succs = tuple(refs)
    return blocks


def _reach(start: str, edges: dict[str, tuple[str, ...]]) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for s in edges.get(todo.pop(), ()):
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return seen


def lines_in_cycles(fn: IRFunction) -> set[int]:
    """Body line indices of the instructions in blocks that lie on a cycle of the CFG: a
    strongly connected component of two or more blocks, or a block that branches to itself
    (Tarjan's algorithm, iterative: functions may have thousands of blocks)."""
    blocks = _blocks(fn)
    edges = {b.name: b.succs for b in blocks}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cyclic: set[str] = set()
    for root in edges:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, k = work.pop()
            if k == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on_stack.add(v)
            succs = edges.get(v, ())
            if k < len(succs):
                work.append((v, k + 1))
                w = succs[k]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1 or v in succs:
                    cyclic.update(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return {i for b in blocks if b.name in cyclic for i, _ in b.lines}


def _private_slots(fn: IRFunction, exempt: set[int]) -> set[str]:
    """Allocas used only as the address of plain loads and stores (never escape), but for the
    lines that keep a slot's address in a reference slot (`exempt`, slot_refs.py)."""
    slots = {m.group(1) for m in map(_ALLOCA_RE.match, fn.lines) if m}
    if not slots:
        return slots
    use_re = re.compile(r'(%[-\w.$]+|%"[^"]*")')
    for i, text in enumerate(fn.lines):
        if text.lstrip().startswith("#dbg_") or _ALLOCA_RE.match(text) or i in exempt:
            continue
        names = set(use_re.findall(text)) & slots
        if not names:
            continue
        ms, ml = _STORE_RE.match(text), _LOAD_RE.match(text)
        mi = backoff._INSTR_RE.match(_TRAILER_RE.sub("", text.rstrip()))
        ok = set()
        if ms and ms.group(2).strip() not in slots:
            ok = {ms.group(3)}
        elif ml:
            ok = {ml.group(3)}
        elif mi and (backoff.is_hook(mi.group(2), mi.group(3)) or backoff.is_lifetime(mi.group(2), mi.group(3))):
            ok = names
        if "volatile" in text.split(",")[0]:
            ok = set()
        slots -= names - ok
    return slots


class _Function:
    """What every candidate loop of one function needs: its blocks, edges and stack slots."""

    def __init__(self, fn: IRFunction):
        # accesses through a reference slot written as accesses of the slot it refers to
        lines, exempt = slot_refs.canonical_lines(fn.lines)
        fn = dataclasses.replace(fn, lines=lines)
        self.blocks = _blocks(fn)
        # the entry block has no label: branches name it by its number, the one after the
        # unnamed parameters (it can never be on a cycle: nothing branches to it)
        params = fn.header[fn.header.find("("):]
        unnamed = re.findall(r"%\d+(?=[,)])", params)
        self.entry_name = "%%%d" % len(unnamed)
        self.by_name = {b.name: b for b in self.blocks}
        self.by_name.setdefault(self.entry_name, self.blocks[0])
        self.edges = {b.name: b.succs for b in self.blocks}
        preds: dict[str, list[str]] = {}
        for b in self.blocks:
            for s in b.succs:
                preds.setdefault(s, []).append(b.name)
        self.preds = {k: tuple(v) for k, v in preds.items()}
        self.slots = _private_slots(fn, exempt)
        self.sleep_slots = backoff.sleep_address_map(fn.lines, backoff.sleep_slots(fn.lines))
        # slot -> the blocks that mention it
        self.slot_blocks: dict[str, set[str]] = {s: set() for s in self.slots}
        self.slot_loads: dict[str, set[str]] = {}
        if self.slots:
            name_re = re.compile(r'(%[-\w.$]+|%"[^"]*")')
            for b in self.blocks:
                for _, text in b.lines:
                    if _ALLOCA_RE.match(text):
                        continue
                    for name in set(name_re.findall(text)) & self.slots:
                        self.slot_blocks[name].add(b.name)
                    ml = _LOAD_RE.match(text)
                    if ml and ml.group(3) in self.slots:
                        self.slot_loads.setdefault(ml.group(3), set()).add(b.name)
        self.block_at = {i: b for b in self.blocks for i, _ in b.lines}
        # SSA name -> the block defining it; slot -> the values stored to it (operand texts)
        self.def_block: dict[str, str] = {}
        self.slot_stores: dict[str, set[str]] = {}
        for b in self.blocks:
            for _, text in b.lines:
                md = re.match(r'^  (%[-\w.$]+|%"[^"]*") = ', text)
                if md:
                    self.def_block[md.group(1)] = b.name
                ms = _STORE_RE.match(text)
                if ms and ms.group(3) in self.slots:
                    self.slot_stores.setdefault(ms.group(3), set()).add(ms.group(2).strip())
        self._loops: list[set[str]] | None = None

    def innermost_loop(self, name: str) -> set[str]:
        """The blocks of the smallest natural loop containing block `name` (empty if none):
        a back edge u -> h is one whose target dominates its source; its loop is h and the
        blocks that reach u without passing through h."""
        if self._loops is None:
            self._loops = self._natural_loops()
        best: set[str] = set()
        for body in self._loops:
            if name in body and (not best or len(body) < len(best)):
                best = body
        return best

    def _natural_loops(self) -> list[set[str]]:
        return list(self.natural_loops_by_header().values())

    def natural_loops_by_header(self) -> dict[str, set[str]]:
        """header -> the blocks of its natural loop (the union over the back edges to it)."""
        names = [b.name for b in self.blocks]
        if len(names) > 2000:
            return {}
        entry = names[0]
        reachable = {entry} | _reach(entry, self.edges)
        dom = {n: set(reachable) for n in reachable}
        dom[entry] = {entry}
        changed = True
        while changed:
            changed = False
            for n in names[1:]:
                if n not in reachable:
                    continue
                ps = [dom[p] for p in self.preds.get(n, ()) if p in reachable]
                new = {n} | (set.intersection(*ps) if ps else set())
                if new != dom[n]:
                    dom[n], changed = new, True
        bodies: dict[str, set[str]] = {}
        for u in reachable:
            for h in self.edges.get(u, ()):
                if h in dom[u]:                      # a back edge u -> h
                    body = bodies.setdefault(h, {h})
                    todo = [u]
                    while todo:
                        b = todo.pop()
                        if b not in body:
                            body.add(b)
                            todo.extend(p for p in self.preds.get(b, ()) if p in reachable)
        return bodies

    def block_of(self, index: int) -> _Block | None:
        return self.block_at.get(index)


class _Region:
    def __init__(self, info: _Function, head: _Block, target: int, rotated: bool = False):
        self.by_name = info.by_name
        self.head = head
        self.target = target            # body index of the atomic instruction
        if head.name not in _reach(head.name, info.edges):
            raise NotALoop("not in a loop")
        # the innermost natural loop around the block: an outer loop's blocks (the code
        # between two waits of a round) are not iterations of this one
        self.members = info.innermost_loop(head.name)
        if not self.members:
            raise NotALoop("not in a loop")
        if "" in self.members:
            raise NotALoop("loop too large")
        # an iteration starts at the loop's header: the atomic instruction may lie deeper (an
        # accessor clang -O0 inlined, which sets its orders and operands in stack slots first)
        header = next((h for h, body in info.natural_loops_by_header().items() if body == self.members), head.name)
        if rotated:
            # an attempt starts at the read's own block (see find_spin_loops): its phis, if
            # any, would be values of the previous attempt handed on, which this walk cannot
            # hold as counters
            if header == head.name or any(_PHI_RE.match(t) for _, t in head.lines):
                raise NotALoop("no rotated walk")
            header = head.name
        if len(self.members) > (MAX_REGION_BLOCKS if header == head.name else MAX_INLINED_REGION_BLOCKS):
            raise NotALoop("loop too large")
        self.head = head = info.by_name[header]
        self.rotated = rotated
        self.walked = 0                 # blocks walked, against MAX_WALK_BLOCKS
        self.slots = info.slots
        self.info = info
        self.ctr_names: set[str] = set()   # SSA names holding a counter (a value no read gave)
        self.used_outside = {s for s, where in info.slot_blocks.items() if where - self.members}
        outside = [p for p in info.preds.get(head.name, ()) if p not in self.members]
        self.entry = self._entry_values(outside)
        self.expected = self.desired = None
        self.bits = 64                  # width of the value read
        self.exits: list[tuple] = []    # assumptions of the exit paths
        self.backs: list[tuple] = []    # assumptions of the back edges
        self.back_states: list[dict] = []
        self.exit_written: list[frozenset] = []   # the slots each exit path wrote
        self.exit_states: list[dict] = []
        self.entry_read: set[str] = set()
        self.compared: set = set()      # what the value read is compared with
        self.location = ""              # the global the pointer resolves to, if any
        self.low_bit = False            # a byte read tested by its low bit (a plain trunc to i1)
        self.carries_read = False       # a failed iteration hands a value read to the next one
        self.effect_exits = 0           # paths that reach an effect after the read (_walk)
        self.slot_traffic = False       # a private slot is loaded or stored in the region

    def _entry_values(self, outside: list[str]) -> dict[str, tuple]:
        """Slot -> the constant the single block entering the loop stores last (else unknown)."""
        values: dict[str, tuple] = {}
        if len(outside) != 1:
            return values
        for _, text in self.by_name[outside[0]].lines:
            m = _STORE_RE.match(text)
            if m and m.group(3) in self.slots:
                lit = literal(m.group(2))
                values[m.group(3)] = lit if lit is not None else ("entry", m.group(3))
        return values

    # --- symbolic execution ---------------------------------------------------------------

    def run(self) -> None:
        self._walk_once()
        # a slot a failed iteration changes without a read (a counter) holds something else
        # on every iteration: walk again with its entry value unknown, so that comparing the
        # value read with it cannot pass for a wait on a constant
        counters = {s for state in self.back_states for s in self.slots
                    if state[s] != self.entry.get(s, ("entry", s)) and not on_read(state[s])
                    and self.entry.get(s, ("entry", s)) != ("ctr", s)}
        if counters:
            for s in counters:
                self.entry[s] = ("ctr", s)
            self.exits, self.backs, self.back_states, self.exit_written = [], [], [], []
            self.exit_states = []
            self.entry_read, self.compared = set(), set()
            self._walk_once()

    def _walk_once(self) -> None:
        mem = {s: self.entry.get(s, ("entry", s)) for s in self.slots}
        self._walk(self.head, {}, mem, (None, None), 0, frozenset())
        if not self.exits or not self.backs:
            raise NotALoop("no exit or no back edge")
        # a failed iteration must leave every slot that is read before written, or used after
        # the loop, as it found it
        # what every exit path writes (the last iteration overwrites what failed ones wrote)
        overwritten = frozenset.intersection(*self.exit_written)
        for state in self.back_states:
            for s in self.slots:
                if state[s] == self.entry.get(s, ("entry", s)):
                    continue
                if not on_read(state[s]) and self._counter_slot(s):
                    continue
                if s in self.entry_read or (s in self.used_outside and s not in overwritten):
                    raise NotALoop("a failed iteration changes " + s)
        # a counter (a loop-carried value no read gave) may only decide which inert calls a
        # failed iteration makes: the code after the loop must not see it
        if self.ctr_names:
            name_re = re.compile(r'(%[-\w.$]+|%"[^"]*")')
            outside = [text for b in self.info.blocks if b.name not in self.members for _, text in b.lines]
            used = {n for text in outside for n in name_re.findall(text)} & self.ctr_names
            # a delay kept for the next wait may outlive the loop when it only times sleeps
            if used and not backoff.timing_only(used, outside, self.info.sleep_slots.get):
                raise NotALoop("a counter of the loop is used after it")

    def _invariant(self, name: str, depth: int = 0) -> bool:
        """Whether a pointer operand is the same on every iteration: a global, a value defined
        outside the loop, or a load of a stack slot to which the function only ever stores
        one such value (clang -O0 passes `this` through a slot: `store ptr @f, ptr %1`)."""
        if name.startswith(("@", "getelementptr")) or self.info.def_block.get(name) not in self.members:
            return True     # a global, a member of one at constant indices, a value from before
        if depth > 2:
            return False
        for b in self.members:
            for _, text in self.by_name[b].lines:
                mg = _GEP_RE.match(text)
                if mg and mg.group(1) == name:
                    return self._invariant(mg.group(2), depth + 1)
                m = _LOAD_RE.match(text)
                if m and m.group(1) == name and m.group(3) in self.slots:
                    stored = self.info.slot_stores.get(m.group(3), set())
                    return len(stored) == 1 and self._invariant(next(iter(stored)), depth + 1)
        return False

    def _resolve(self, name: str, depth: int = 0) -> str:
        """The global a pointer operand is, through slots set to it (else "")."""
        if name.startswith(("@", "getelementptr")):
            return name
        if depth > 2:
            return ""
        for b in self.info.blocks:
            for _, text in b.lines:
                mg = _GEP_RE.match(text)
                if mg and mg.group(1) == name:     # named by the structure it is a member of
                    return self._resolve(mg.group(2), depth + 1)
                m = _LOAD_RE.match(text)
                if m and m.group(1) == name and m.group(3) in self.slots:
                    stored = self.info.slot_stores.get(m.group(3), set())
                    return self._resolve(next(iter(stored)), depth + 1) if len(stored) == 1 else ""
        return ""

    def _counter_slot(self, s: str) -> bool:
        """A slot a failed iteration changes with a value no read gave (a back-off counter,
        `spins++`) is left behind harmlessly when nothing after the loop reads it and the value
        read is never compared with it."""
        after = _reach(self.head.name, self.info.edges) - self.members
        if self.info.slot_loads.get(s, set()) & after:
            return False
        return not any(mentions(c, ("entry", s)) for c in self.compared)

    def _value(self, env, text: str):
        lit = literal(text)
        if lit is not None:
            return lit
        text = text.strip()
        if self.rotated and text not in env and self.info.def_block.get(text) in self.members:
            # walked from the read's block, a value the loop's header computes is met before
            # the walk defines it: it is not fixed before the loop
            raise NotALoop("a value of the previous attempt")
        if text.startswith("%"):
            return env.get(text, ("ext", text))
        if text.startswith("@"):
            return ("ext", text)
        raise NotALoop("operand " + text)

    def _walk(self, block: _Block, env, mem, assume, depth, written, source=None) -> None:
        self.walked += 1
        if depth > MAX_PATH_BLOCKS or self.walked > MAX_WALK_BLOCKS:
            raise NotALoop("path too long")
        env, mem, written = dict(env), dict(mem), set(written)
        phis = self._phis(block, env, source)
        env.update(phis)
        for index, text in block.lines[len(phis):-1]:
            try:
                self._step(index, text, env, mem, written)
            except _Effect:
                if _READ not in env or self.rotated:
                    # walked from the read's block, the header's code comes after the read
                    # but is made by every attempt: an effect there is no exit
                    raise
                # an effect after the read: the wait's successful read has been made (a TTAS
                # lock's exchange in the loop that also re-reads the word, merged by -O2)
                self.effect_exits += 1
                self.exits.append(assume)
                self.exit_written.append(frozenset(written))
                self.exit_states.append(mem)
                return None
        written = frozenset(written)
        index, term = block.lines[-1]
        m = _BR_RE.match(term)
        if m:
            return self._edge(m.group(1), env, mem, assume, depth, written, block.name)
        m = _INVOKE_RE.match(term)
        if m:       # a call that cannot throw (see _call): its normal edge only
            self._call(m.group(1), "call " + m.group(2), env)
            return self._edge(m.group(3), env, mem, assume, depth, written, block.name)
        m = _SWITCH_RE.match(term)
        if m:
            value = self._value(env, m.group(2))
            cases = [(signed(int(c), int(m.group(1)[1:])), t) for c, t in _CASE_RE.findall(m.group(4))]
            if value[0] == "int":       # clang -O0's switch over a memory order it just stored
                target = next((t for c, t in cases if c == signed(value[1], int(m.group(1)[1:]))), m.group(3))
                return self._edge(target, env, mem, assume, depth, written, block.name)
            if value[0] != "ctr":
                raise NotALoop("switch on the value read")
            for target in dict.fromkeys([m.group(3)] + [t for _, t in cases]):
                self._edge(target, env, mem, assume, depth, written, block.name)
            return None
        m = _BR_COND_RE.match(term)
        if not m:
            raise NotALoop("terminator " + term.strip())
        cond = self._value(env, m.group(1))
        for taken, target in ((True, m.group(2)), (False, m.group(3))):
            narrowed = narrow(cond, taken, assume)
            if narrowed is not None:
                self._edge(target, env, mem, narrowed, depth, written, block.name)

    def _phis(self, block: _Block, env, source) -> dict:
        """The phis at the top of block, entered from source (None: the walk starts here and
        they hold what the previous iteration left, a counter)."""
        values = {}
        for _, text in block.lines:
            m = _PHI_RE.match(text)
            if not m:
                break
            if source is None:
                values[m.group(1)] = ("ctr", m.group(1))
                self.ctr_names.add(m.group(1))
                continue
            incoming = {p: v for v, p in _INCOMING_RE.findall(m.group(2))}
            if source not in incoming:
                raise NotALoop("phi without the edge")
            values[m.group(1)] = self._value(env, incoming[source])
            if values[m.group(1)][0] == "ctr":
                self.ctr_names.add(m.group(1))
        return values

    def _edge(self, target, env, mem, assume, depth, written, source=None) -> None:
        if target == self.head.name:
            # what the head's phis carry into the next iteration from a read (_classify)
            if any(on_read(v) for v in self._phis(self.head, env, source).values()):
                self.carries_read = True
            self.back_states.append(mem)
            self.backs.append(assume)
        elif target in self.members:
            self._walk(self.by_name[target], env, mem, assume, depth + 1, written, source)
        else:
            self.exits.append(assume)
            self.exit_written.append(written)
            self.exit_states.append(mem)

    def _step(self, index: int, text: str, env, mem, written) -> None:
        if index == self.target:
            m = _ATOMIC_LOAD_RE.match(text) or _CMPXCHG_RE.match(text)
            if m is None:       # an asm load (asm.py), an acquire load of the same bits
                result, ptr, size = asm_load(text) or ("", "ptr ?", 0)
                if not self._invariant(ptr[4:]) or not size:
                    raise NotALoop("the location may change from one iteration to the next")
                env[_READ] = ("ctr", _READ)
                self.location = self._resolve(ptr[4:])
                env[result] = ("V",)
                self.bits = 8 * size
                return
            if not self._invariant(m.group(3)):
                raise NotALoop("the location may change from one iteration to the next")
            env[_READ] = ("ctr", _READ)
            self.location = self._resolve(m.group(3))
            if m.re is _ATOMIC_LOAD_RE:
                env[m.group(1)] = ("V",)
                self.bits = int(m.group(2)[1:])
            else:
                self.bits = int(m.group(4)[1:])
                env[m.group(1)] = ("PAIR",)
                self.expected = self._value(env, m.group(5))
                self.desired = self._value(env, m.group(7))
            return
        if _OTHER_ATOMIC_RE.match(text):
            raise _Effect("another atomic or volatile access")
        mi = backoff._INSTR_RE.match(text)
        if mi and mi.group(2) in ("call", "store", "getelementptr") and backoff.is_inert(
                mi.group(2), mi.group(3), self.info.sleep_slots.get):
            if mi.group(1):         # a sleep's result, an address in a sleep slot
                env[mi.group(1)] = ("ctr", mi.group(1))
                self.ctr_names.add(mi.group(1))
            return
        m = _GEP_RE.match(text)
        if m and self._invariant(m.group(1)):
            # an address at constant indices from one that is the same on every iteration
            # (the location's own, clang -O0's `&p->b`): no effect, no value read
            env[m.group(1)] = ("addr", m.group(1))
            return
        m = _STORE_RE.match(text)
        if m:
            if m.group(3) not in self.slots:
                raise _Effect("a store to memory that is not a private stack slot")
            mem[m.group(3)] = self._value(env, m.group(2))
            written.add(m.group(3))
            self.slot_traffic = True
            return
        m = _LOAD_RE.match(text)
        if m:
            if m.group(3) not in self.slots:
                raise _Effect("a read of memory that is not a private stack slot")
            v = mem[m.group(3)]
            self.slot_traffic = True
            if v == ("entry", m.group(3)):
                self.entry_read.add(m.group(3))
            env[m.group(1)] = v
            return
        m = _ICMP_RE.match(text)
        if m:
            a, b = self._value(env, m.group(4)), self._value(env, m.group(5))
            cond = (compare_signed if is_signed_view(a) or is_signed_view(b) else compare)(
                a, b, m.group(2) == "eq", self.bits)
            if m.group(3) == "ptr" and cond[:2] == ("pred", "V") and isinstance(cond[2], tuple) \
                    and cond[2][0] == "sym" and cond[2][1][0] == "ext":
                # an SSA pointer (a parameter at -O1): the rewrite passes its address as i64
                cond = ("pred", "V", ("sym", ("ptr", cond[2][1][1])), cond[3])
            env[m.group(1)] = cond
            if cond[:2] == ("pred", "V"):
                self.compared.add(env[m.group(1)][2])
            if env[m.group(1)][0] == "ctr":
                self.ctr_names.add(m.group(1))
            return
        m = _XOR_RE.match(text)
        if m:
            a, b = self._value(env, m.group(2)), self._value(env, m.group(3))
            if b != TRUE:
                a, b = b, a
            if b != TRUE:
                if self._counter(m.group(1), text, env):
                    return
                raise NotALoop("xor")
            env[m.group(1)] = negate(a)
            return
        m = _CAST_RE.match(text)
        if m:
            v = self._value(env, m.group(4))
            vm = masked(v, self.bits, int(m.group(3)[1:]))
            if vm is not None and m.group(2) in ("trunc", "zext") and not text.endswith(" to i1") \
                    and (v[0] == "VM" or m.group(2) == "trunc"):
                # some bits of the value read, narrowed or widened again (unsigned)
                env[m.group(1)] = mask_op(vm, m.group(2), 0, int(m.group(5)[1:]))
                return
            if v[0] == "ctr":
                env[m.group(1)] = v
                self.ctr_names.add(m.group(1))
                return
            if m.group(2) == "sext" and v != ("V",) and vm is not None:
                # some bits of the value read, sign-extended (spinsigned.py: exact for == / !=)
                env[m.group(1)] = sext_of(v, self.bits, int(m.group(3)[1:]), int(m.group(5)[1:]))
                return
            if v == ("V",) and m.group(2) != "trunc":
                env[m.group(1)] = ("VX", m.group(2))     # the value read, widened
                return
            if v[0] in ("entry", "ext") and m.group(2) != "trunc":
                # a value fixed before the loop, widened (clang -O0 compares `me` of a
                # std::atomic<unsigned short> in int): kept with its own width
                env[m.group(1)] = ("FX", m.group(2), v, int(m.group(3)[1:]))
                return
            if m.group(2) == "sext" or (m.group(2) == "zext" and m.group(3) != "i1"):
                raise NotALoop("extension")
            if m.group(2) == "trunc" and v == ("V",) and self.bits == 8 and text.endswith(" to i1"):
                # a bool read (std::atomic<bool>, _Atomic _Bool: 0 or 1) tested: its low bit
                # is its test against 0. `trunc nuw` says the byte is 0 or 1; a plain trunc
                # (clang -O0's bool, or a byte's `& 1`) only as a wait to leave 0 (_classify):
                # a 0 fails both tests, so no read the program leaves on is taken as failed
                env[m.group(1)] = ("pred", "V", 0, False)
                self.low_bit = self.low_bit or " nuw " not in text
                return
            if m.group(2) == "trunc" and not (v[0] == "pred" or v in (TRUE, FALSE)):
                raise NotALoop("truncation of a non-boolean")
            env[m.group(1)] = v
            return
        m = _PTRCAST_RE.match(text)
        if m:
            # the same 64 bits as an address or back (-O1 reads std::atomic<T*> as i64)
            v = self._value(env, m.group(2))
            if v != ("V",) or self.bits != 64:
                raise NotALoop("a pointer cast of something other than the value read")
            env[m.group(1)] = v
            return
        m = _EXTRACT_RE.match(text)
        if m:
            if self._value(env, m.group(2))[0] == "ctr":     # of a pair a head phi carries
                env[m.group(1)] = ("ctr", m.group(1))
                self.ctr_names.add(m.group(1))
                return
            if self._value(env, m.group(2)) != ("PAIR",):
                raise NotALoop("extractvalue")
            env[m.group(1)] = ("V",) if m.group(3) == "0" else ("pred", "OK", 0, True)
            return
        m = _MASK_RE.match(text)
        if m:
            width = int(m.group(3)[1:])
            a, b = self._value(env, m.group(4)), self._value(env, m.group(5))
            if m.group(2) == "and" and b[0] != "int":
                a, b = b, a
            va = masked(a, self.bits, width)
            if va is not None:
                # (V & m) >> s, kept exactly; with anything but a constant it is no wait
                vm = mask_op(va, m.group(2).split()[0], b[1], width) if b[0] == "int" else None
                if vm is None:
                    raise NotALoop("bits of the value read taken otherwise")
                env[m.group(1)] = vm
                return
        m = _ASHR_RE.match(text)
        if m:
            view = ashr_of(self._value(env, m.group(3)), self.bits, int(m.group(4)), int(m.group(2)[1:]))
            if view is not None:
                env[m.group(1)] = view
                return
        m = _FIXED_ARITH_RE.match(text)
        if m:
            a, b = self._value(env, m.group(4)), self._value(env, m.group(5))
            if fixed(a) and fixed(b) and not a[0] == b[0] == "int":
                # a value fixed before the loop, computed again in each iteration from what
                # does not change (clang -O0's `load(&x) != s + 1`: `s` through its slot)
                env[m.group(1)] = ("expr", m.group(2), a, b)
                return
        m = _ARITH_RE.match(text)
        if m and self._counter(m.group(1), text, env):
            return
        mc = re.match(r'^  (?:(%s) = )?(?:tail |notail )?(call .*)$' % _NAME, text)
        if mc:
            return self._call(mc.group(1), mc.group(2), env)
        raise NotALoop("instruction " + text.strip())

    def _call(self, result, call: str, env) -> None:
        """A call in the loop (or an invoke: its unwind edge is never taken, the callee cannot
        throw): inert (backoff.py), or one of libstdc++'s constexpr memory-order helpers, which
        compute an order from an order (evaluated when the arguments are constants)."""
        rest = call[len("call "):]
        if backoff.is_inert("call", rest, self.info.sleep_slots.get):
            if result:
                env[result] = ("ctr", result)
                self.ctr_names.add(result)
            return
        m = _ORDER_HELPER_RE.match(rest)
        if not m:
            raise _Effect("call " + rest.split("(")[0])
        args = [self._value(env, a.split()[-1]) for a in backoff._split_args(m.group(2))]
        if any(on_read(a) for a in args):
            raise NotALoop("a memory order computed from the value read")
        if result is None:
            return
        if all(a[0] == "int" for a in args):
            if m.group(1).startswith("_ZStan"):
                env[result] = ("int", args[0][1] & args[1][1])
            else:   # acq_rel -> acquire, release -> relaxed
                env[result] = ("int", {4: 2, 3: 0}.get(args[0][1], args[0][1]))
        else:
            env[result] = ("ctr", result)
            self.ctr_names.add(result)

    def _counter(self, result: str, text: str, env) -> bool:
        """Arithmetic on values no read gave (a back-off counter: `++spins > 8`, `delay *= 2`):
        a counter value, which only branches may use (both ways are followed)."""
        rest = text.split("=", 1)[1]
        args = [self._value(env, n) for n in re.findall(r'%[-\w.$]+|%"[^"]*"', rest)]
        if any(on_read(a) for a in args):
            return False
        env[result] = ("ctr", result)
        self.ctr_names.add(result)
        return True


def _classify(region: _Region) -> LoopMatch:
    if region.effect_exits and (region.ctr_names or region.slot_traffic or region.carries_read):
        # the code after an effect exit runs inside the loop and comes back to its header: only
        # with nothing carried from one iteration to the next (no phi at the header, no stack
        # slot) is a failed attempt sure to leave that code as it found it
        raise NotALoop("an effect in the loop, and state carried between its iterations")
    exits_v = {a[0] for a in region.exits}
    backs_v = {a[0] for a in region.backs}
    if len(region.compared) > 1 and any(isinstance(c, tuple) for c in region.compared):
        # a value fixed before the loop may equal a constant: the paths are not told apart
        raise NotALoop("the value read is compared with a variable and something else")
    index = region.target
    if region.carries_read:
        # what a failed iteration read reaches the next one only as a counter (the walk holds
        # the head's phis so): it may decide what a later failed iteration does, but what the
        # code after the loop reads must not be what the last iteration got from it
        after = _reach(region.head.name, region.info.edges) - region.members
        read_after = {s for s in region.slots if region.info.slot_loads.get(s, set()) & after}
        if any(state[s][0] == "ctr" for state in region.exit_states for s in read_after):
            raise NotALoop("a failed iteration hands a value read to the code after the loop")
    if region.expected is not None:                  # a CAS
        if None not in exits_v or None not in backs_v or len(exits_v | backs_v) != 1:
            raise NotALoop("the loop looks at the old value")
        if {a[1] for a in region.exits} != {True} or {a[1] for a in region.backs} != {False}:
            raise NotALoop("the loop does not leave exactly when the CAS succeeds")
        if not (fixed(region.expected) and fixed(region.desired)):
            raise NotALoop("expected or desired value not fixed before the loop")
        value, desired = (v[1] if v[0] == "int" else ("sym", v) for v in (region.expected, region.desired))
        return LoopMatch(index, "bcas", value, desired)
    if len(exits_v) == 1 and next(iter(exits_v)) and next(iter(exits_v))[0] == "eq":
        if region.low_bit:
            raise NotALoop("a wait for a byte's low bit to clear")
        return LoopMatch(index, "wait", next(iter(exits_v))[1])
    if len(backs_v) == 1 and next(iter(backs_v)) and next(iter(backs_v))[0] == "eq":
        value = next(iter(backs_v))[1]
        # every exit must have read another value: a loop that also leaves on the value it
        # retries on (a bounded poll, `for (i = 0; i < n; i++) if (load(&f)) return 1;`) acts
        # on a read the wait would drop as a failed attempt
        if exits_v != {("ne", frozenset({value}))}:
            raise NotALoop("the loop also leaves on the value it waits to change")
        return LoopMatch(index, "wait", value, negated=True)
    raise NotALoop("the loop does not wait for one value")


def _peeled_attempts(info: _Function, fn: IRFunction, found: dict[int, LoopMatch]) -> dict[int, LoopMatch]:
    """The first attempt of a recognised wait loop that the compiler peeled off the loop
    (a loop with a body is rotated at -O1: `v = load(x); if (v != C) do { body; v = load(x);
    } while (v != C);`): a load of the same location with the same order and type, in a block
    that enters the loop, followed only by the comparison with the same value and a branch
    that leaves exactly when the loop would and otherwise enters the loop's head. It is one
    more attempt of the same wait. Between the load and the comparison there may be the steps
    that take some of its bits (a masked wait's `and` / `lshr` / `trunc` / `zext`), which must
    give the loop's own key."""
    extra: dict[int, LoopMatch] = {}
    for index, loop in found.items():
        if loop.kind != "wait":
            continue
        head = info.block_of(index)
        if head is None:
            continue
        members = info.innermost_loop(head.name)
        key = _load_key(fn.lines[index])
        entering = dict.fromkeys(p for b in sorted(members) for p in info.preds.get(b, ()))
        for pred in entering:
            block = info.by_name.get(pred)
            if pred in members or block is None or len(block.lines) < 3:
                continue
            peeled = _peeled_test(block.lines, key)
            if peeled is None or peeled[0] in found:
                continue
            i0, value, equal, unequal = peeled
            if value != loop.value:
                continue
            leave, stay = (unequal, equal) if loop.negated else (equal, unequal)
            # stay: the loop's header (a block of the loop entered from outside it), which is
            # the load's block or, with a body before the load (a back-off counter), a block
            # whose path to the load is the rest of a failed iteration: effect-free, and
            # exit-free since every exit of a recognised wait assumes its read succeeded
            if stay in members and leave not in members:
                extra[i0] = LoopMatch(i0, "wait", loop.value, negated=loop.negated, listed=False)
    return extra


def _load_key(text: str) -> str:
    """`load atomic i32, ptr @x acquire` of a load line (type, pointer, order); of an asm load
    (asm.py asm_load), its pointer and size."""
    m = _ATOMIC_LOAD_RE.match(text)
    if m:
        return "%s %s %s" % (m.group(2), m.group(3), m.group(4))
    load = asm_load(text) if " asm " in text else None
    return "asm %s %d" % (load[1], load[2]) if load else ""


def _peeled_test(lines: list[tuple[int, str]], key: str):
    """A block that ends `v = load(x); [bits of v;] c = icmp eq/ne ..., K; br c` with the load's
    _load_key `key`: (the load's index, the comparison's key as _classify gives it, the target
    taken when it holds, the other one); None when the block ends otherwise."""
    for j in range(len(lines) - 2, -1, -1):
        if _load_key(lines[j][1]) == key:
            break
    else:
        return None
    i0, t0 = lines[j]
    m0, a0 = _ATOMIC_LOAD_RE.match(t0), asm_load(t0)
    if m0:
        result, bits = m0.group(1), int(m0.group(2)[1:])
    elif a0:
        result, bits = a0[0], 8 * a0[2]
    else:
        return None
    env: dict = {result: ("V",)}

    def value(text: str):
        text = text.strip()
        lit = literal(text)
        return lit if lit is not None else env.get(text, ("ext", text) if text.startswith("%") else None)
    for _, text in lines[j + 1:-1]:
        mm, mc, mi = _MASK_RE.match(text), _CAST_RE.match(text), _ICMP_RE.match(text)
        ma = _ASHR_RE.match(text)
        if ma:
            view = value(ma.group(3))
            view = ashr_of(view, bits, int(ma.group(4)), int(ma.group(2)[1:])) if view is not None else None
            if view is None:
                return None
            env[ma.group(1)] = view
        elif mc and mc.group(2) == "sext":
            v = value(mc.group(4))
            view = sext_of(v, bits, int(mc.group(3)[1:]), int(mc.group(5)[1:])) if v is not None else None
            if view is None:
                return None
            env[mc.group(1)] = view
        elif mm:
            width = int(mm.group(3)[1:])
            a, b = value(mm.group(4)), value(mm.group(5))
            if mm.group(2) == "and" and b is not None and b[0] != "int":
                a, b = b, a
            va = masked(a, bits, width) if a is not None else None
            vm = mask_op(va, mm.group(2).split()[0], b[1], width) if va and b and b[0] == "int" else None
            if vm is None:
                return None
            env[mm.group(1)] = vm
        elif mc and mc.group(2) in ("trunc", "zext") and not text.endswith(" to i1"):
            v = value(mc.group(4))
            if v == ("V",) and mc.group(2) == "zext":
                env[mc.group(1)] = ("VX", "zext")
                continue
            vm = masked(v, bits, int(mc.group(3)[1:])) if v is not None else None
            if vm is None:
                return None
            env[mc.group(1)] = mask_op(vm, mc.group(2), 0, int(mc.group(5)[1:]))
        elif mi and mi.group(3) != "ptr":
            a, b = value(mi.group(4)), value(mi.group(5))
            if a is None or b is None or not (on_read(a) or on_read(b)):
                return None
            try:
                env[mi.group(1)] = (compare_signed if is_signed_view(a) or is_signed_view(b) else compare)(
                    a, b, mi.group(2) == "eq", bits)
            except NotALoop:
                return None
        else:
            return None
    mb = _BR_COND_RE.match(lines[-1][1])
    cond = env.get(mb.group(1).strip()) if mb else None
    if mb is None or not cond or cond[:2] != ("pred", "V"):
        return None
    when, other = (mb.group(2), mb.group(3)) if cond[3] else (mb.group(3), mb.group(2))
    return i0, cond[2], when, other


def find_spin_loops(fn: IRFunction) -> dict[int, LoopMatch]:
    """Body line index of the atomic instruction of each recognised loop -> what it waits for."""
    if not any(("load atomic" in t or "cmpxchg" in t or " asm " in t) for t in fn.lines):
        return {}
    info = None
    found: dict[int, LoopMatch] = {}
    for i, text in enumerate(fn.lines):
        if not (_ATOMIC_LOAD_RE.match(text) or _CMPXCHG_RE.match(text)
                or (" asm " in text and asm_load(text))):
            continue
        if info is None:
            info = _Function(fn)
        head = info.block_of(i)
        if head is None:
            continue
        for rotated in (False, True):
            try:
                region = _Region(info, head, i, rotated)
                region.run()
                found[i] = _classify(region)
                if region.location:
                    found[i] = dataclasses.replace(found[i], location=region.location)
                break
            except NotALoop:
                continue
    if info is not None:
        found.update(_peeled_attempts(info, fn, found))
    shared = analyse_cas(fn.lines, fn.header)
    if shared is None:
        return found
    for loop in find_cas_loops(fn.lines, fn.header, set(found), shared):
        if any(a in found for a in loop.attempts):
            continue
        found[loop.load] = LoopMatch(loop.load, "casloop_load", 0, listed=False, location=loop.location)
        for k, a in enumerate(loop.attempts):
            found[a] = LoopMatch(a, "casloop_cas", 0, listed=k == 0, location=loop.location)
    # the other compare-exchanges whose failure only feeds a retry (reports: failed-cas)
    for index in find_retry_cas(fn.lines, fn.header, set(found), shared):
        found[index] = LoopMatch(index, "cas_retry", 0, listed=False)
    return found

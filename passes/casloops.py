"""CAS retry loops that are atomic read-modify-writes (RSAN's BCAS generalised).

    old = atomic_load(&x);                               first read  -> __rsan_casloop_load_N
    do { new = f(old); } while (!atomic_compare_exchange(&x, &old, new));
                                                         attempts    -> __rsan_casloop_cas_N

When nothing but the compare-exchange has an effect, such a loop *is* `x := f(x)` done
atomically: a stale `old` only makes an attempt fail, and the retry starts from the value the
failed attempt read. The runtime therefore models the loop as one RMW event (the successful
attempt, with its success order and the RMW write check); the first read and the failed
attempts create no events (RSAN paper §4.3: failed attempts of a BCAS create no events).
docs/reports.md §1 has the argument; in short, running the loop's reads right before its
successful attempt gives an SC execution of the program in which they read what the
successful attempt reads, so the loop leaves the thread in the state the one RMW gives it,
provided no read of the loop is ordered more strongly than the success order's read part
(checked below: a load-acquire followed by a relaxed CAS is left alone).

What is proved from the IR (symbolic execution of every path from the first read):
- Effects: between the first read and an attempt, and from a failed attempt to the next one,
  only pure instructions (arithmetic, comparisons, casts, GEPs, select, phi, extract/insert
  value, pure intrinsics), loads and stores of the function's own stack slots that never
  escape (race hooks on them are not an escape), and what backoff.py calls inert (pause
  hints, yields, sleeps with their timespec on the stack). Anything else (another atomic, any
  other memory access or call, a return or a switch) on such a path leaves the loop alone.
- Attempts: every compare-exchange reached is on the first read's pointer and expects the
  value read last (the first read's, then the one the previous failed attempt returned).
- Exit only on success: a path may leave only after a branch that proves the latest attempt
  succeeded; a path after a failed attempt (or one whose outcome is not yet known) must reach
  another attempt. So the values the loop hands on are functions of what the successful
  attempt read.
- Nothing carried from failed iterations: the state live at an attempt (SSA values and stack
  slots), with the value read last renamed, is the same at every arrival. A value that
  differs between arrivals but depends on no read (a back-off counter of the loop's own) is
  allowed when it feeds neither the desired value nor anything outside the loop.
- Entry only through the first read: every block of the loop is entered from the loop or
  from the first read's block (or from a block only dead edges lead to, below).
- clang -O0's std::atomic (docs/reports.md §1): libstdc++'s constexpr order helpers are
  evaluated on constants (an invoke of one takes its normal edge), a switch whose scrutinee
  is a slot every store sets to one literal takes that case (the other edges are dead), a
  pointer loaded from a reference slot addresses the slot it holds (`old` by reference).
"""
from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from . import backoff

MAX_PATH_BLOCKS = 24
MAX_PATHS = 256
MAX_WIDEN = 3
MAX_STATES = 6

_NAME = r'%[-\w.$]+|%"[^"]*"'
_NAME_RE = re.compile(_NAME)
_LABEL_RE = re.compile(r'^("[^"]+"|[-\w.$]+):')
_INSTR_RE = re.compile(r'^  (?:(%s) = )?(?:(?:tail|musttail|notail) )?([a-z_]+)\b ?(.*)$' % _NAME)
_TRAILER_RE = re.compile(r'(?:, (?:!dbg|!llvm\.loop|!\w[\w.]*) ![0-9]+)+$')
_LABEL_REF_RE = re.compile(r'\blabel (%s)' % _NAME)
_PARAM_RE = re.compile(r'(%s)(?=[,)])' % _NAME)
_ORDERS = r'(unordered|monotonic|acquire|release|acq_rel|seq_cst)'
# `load atomic i64, ptr %0 monotonic, align 8`
_ALOAD_RE = re.compile(r'^atomic (i8|i16|i32|i64|ptr), ptr (\S+) %s, align' % _ORDERS)
# `cmpxchg weak ptr %0, i64 %5, i64 %7 release monotonic, align 8`
_CMPXCHG_RE = re.compile(r'^(weak )?ptr (\S+), (i8|i16|i32|i64|ptr) ([^,]+), (?:i8|i16|i32|i64|ptr) (\S+) '
                         r'%s %s, align' % (_ORDERS, _ORDERS))
_STORE_RE = re.compile(r'^(\S+) ([^,]+), ptr (%s), align' % _NAME)
_LOAD_RE = re.compile(r'^(\S+), ptr (%s), align' % _NAME)
_ALLOCA_RE = re.compile(r'^  (%s) = alloca ' % _NAME)
_BR_COND_RE = re.compile(r'^i1 (\S+), label (%s), label (%s)$' % (_NAME, _NAME))
_BR_RE = re.compile(r'^label (%s)$' % _NAME)
_PHI_RE = re.compile(r'\[ ([^,\]]+), (%s) \]' % _NAME)

# floating-point arithmetic is pure too (LLVM's non-constrained fadd ... have no side effect;
# the constrained intrinsics of strict FP are calls and stay out): C++20's
# std::atomic<double>::fetch_add is libstdc++'s load + compare_exchange_weak loop around an fadd
_PURE = frozenset("""add sub mul udiv sdiv urem srem shl lshr ashr and or xor icmp select zext
sext trunc ptrtoint inttoptr bitcast getelementptr extractvalue insertvalue freeze
fadd fsub fmul fdiv frem fneg fcmp fptrunc fpext fptoui fptosi uitofp sitofp""".split())
_PURE_INTRINSIC_RE = re.compile(r'^(?:[\w()]+ )*@llvm\.(?:umax|umin|smax|smin|abs|ctpop|ctlz|cttz|bswap|'
                                r'fshl|fshr|expect)\.')
_SWITCH_RE = re.compile(r'^(i\d+) (\S+), label (%s) \[(.*)\]$' % _NAME)
_CASE_RE = re.compile(r'i\d+ (-?\d+), label (%s)' % _NAME)
_INVOKE_RE = re.compile(r'^(.*) to label (%s) unwind label (%s)$' % (_NAME, _NAME))
# libstdc++'s constexpr memory-order helpers that clang -O0 calls from std::atomic's members
_ORDER_HELPER_RE = re.compile(r'^(?:[\w()]+ )*i32 @(_ZStanSt12memory_orderSt23__memory_order_modifier|'
                              r'_ZSt23__cmpexch_failure_orderSt12memory_order|'
                              r'_ZSt24__cmpexch_failure_order2St12memory_order)\((.*)\)(?: #\d+)?$')
_READ_RANK = {"unordered": 0, "monotonic": 0, "release": 0, "acquire": 1, "acq_rel": 1, "seq_cst": 2}


@dataclass(frozen=True)
class CasLoop:
    load: int                    # body index of the first read
    attempts: tuple[int, ...]    # body indices of the compare-exchanges
    location: str = ""           # the global it updates when the pointer is one (for -v)


class _Reject(Exception):
    pass


# symbolic values: ("read", k) the value read by read k (0: the first read, k: attempt k);
# ("pair", k) attempt k's result; ("ok", k, pol) "attempt k succeeded" (pol) or failed;
# ("b2i", okpred) that boolean as an integer; ("ext", name) a value from before the walk;
# ("entry", slot) a slot's content before the walk; ("int", n); ("op", template, args)
# any other pure computation; ("top", key) a widened loop counter.

def _contains(value, pred) -> bool:
    """Whether value or a value inside it satisfies pred. A symbolic value is a tagged tuple
    (its tag first); the arguments of ("op", template, args) are an untagged tuple, every one
    of which is looked into (skipping its first one hid `f(read)` from the checks)."""
    tagged = bool(value) and isinstance(value[0], str)
    if tagged and pred(value):
        return True
    return any(isinstance(v, tuple) and _contains(v, pred) for v in (value[1:] if tagged else value))


def _subst(value, mapping):
    if value in mapping:
        return mapping[value]
    if isinstance(value, tuple) and any(isinstance(v, tuple) for v in value):
        return tuple(_subst(v, mapping) if isinstance(v, tuple) else v for v in value)
    return value


def _is_read(v) -> bool:
    return v[0] in ("read", "pair", "ok")


class _Block:
    __slots__ = ("name", "lines", "succs", "phis")

    def __init__(self, name):
        self.name = name
        self.lines: list[tuple[int, str]] = []
        self.succs: tuple[str, ...] = ()


class _Fn:
    def __init__(self, lines: list[str], header: str):
        self.blocks: list[_Block] = []
        cur = _Block("")
        for i, text in enumerate(lines):
            m = _LABEL_RE.match(text)
            if m:
                self.blocks.append(cur)
                cur = _Block("%" + m.group(1))
                continue
            stripped = text.strip()
            if not stripped or stripped.startswith((";", "#dbg_")):
                continue
            if (text.startswith("   ") or stripped.startswith("]")) and cur.lines:
                j, prev = cur.lines[-1]
                cur.lines[-1] = (j, _TRAILER_RE.sub("", prev + " " + stripped.rstrip()))
                continue
            cur.lines.append((i, _TRAILER_RE.sub("", text.rstrip())))
        self.blocks.append(cur)
        params = header[header.find("("):]
        # the entry block has no label: it is numbered right after the unnamed parameters
        unnamed = [n for n in _PARAM_RE.findall(params) if re.fullmatch(r"%\d+", n)]
        self.blocks[0].name = "%%%d" % len(unnamed)
        self.by_name = {b.name: b for b in self.blocks}
        self.preds: dict[str, set[str]] = {b.name: set() for b in self.blocks}
        for b in self.blocks:
            b.succs = tuple(_LABEL_REF_RE.findall(b.lines[-1][1])) if b.lines else ()
            for s in b.succs:
                self.preds.setdefault(s, set()).add(b.name)
        self.block_of = {i: b for b in self.blocks for i, _ in b.lines}
        self.locals = set(_PARAM_RE.findall(params))
        for b in self.blocks:
            for _, text in b.lines:
                m = _INSTR_RE.match(text)
                if m and m.group(1):
                    self.locals.add(m.group(1))
        self.alias, self.const_load = self._references()
        self.slots = self._private_slots()
        self.alias = {n: b for n, b in self.alias.items() if b in self.slots}
        self.static_dead = self._static_dead()
        self.sleep_slots = backoff.sleep_address_map(lines, backoff.sleep_slots(lines))
        # computed at the first attempt a walk reaches: (live in, live out) per block
        self._live: tuple[dict[str, set], dict[str, set]] | None = None

    def _references(self) -> tuple[dict[str, str], dict[str, str]]:
        """clang -O0 passes `old` to std::atomic's compare_exchange by reference, through
        another slot: `store ptr %old, ptr %ref` ... `%p = load ptr, ptr %ref` ... `load i64,
        ptr %p`. A reference slot is an alloca whose stores all store the address of one
        other alloca and whose loads give pointers used only as the address of plain loads,
        stores and race hooks: alias maps those pointers to the slot they address.
        const_load maps `%p = load ptr, ptr %s` to the global every store to %s stores (`this`
        of a global std::atomic at -O0)."""
        allocas = {m.group(1) for b in self.blocks for _, t in b.lines for m in [_ALLOCA_RE.match(t)] if m}
        stored: dict[str, set[str]] = {}
        loads: dict[str, str] = {}          # pointer loaded -> the slot it was loaded from
        other: set[str] = set()             # allocas used otherwise
        texts = [t for b in self.blocks for _, t in b.lines if not _ALLOCA_RE.match(t)]
        for text in texts:
            m = _INSTR_RE.match(text)
            op, rest = (m.group(2), m.group(3)) if m else ("", "")
            if op == "store" and not rest.startswith("volatile"):
                ms = _STORE_RE.match(rest)
                if ms and ms.group(3) in allocas:
                    stored.setdefault(ms.group(3), set()).add(ms.group(2).strip())
                    other |= set(_NAME_RE.findall(ms.group(2))) & allocas - {ms.group(2).strip()}
                    continue
            if op == "load" and not rest.startswith(("volatile", "atomic")):
                ml = _LOAD_RE.match(rest)
                if m and ml and ml.group(2) in allocas:
                    loads[m.group(1)] = ml.group(2)
                    continue
            if backoff.is_lifetime(op, rest) or backoff.is_hook(op, rest):
                continue
            other |= set(_NAME_RE.findall(rest)) & allocas
        alias: dict[str, str] = {}
        const_load: dict[str, str] = {}
        for ptr, slot in loads.items():
            values = stored.get(slot, set())
            if slot in other or len(values) != 1:
                continue
            (value,) = values
            if value.startswith("@") or re.fullmatch(r"-?\d+", value):
                const_load[ptr] = value
            elif value in allocas:
                alias[ptr] = value
        # a reference's pointer may only address plain loads and stores (and their hooks)
        for text in texts:
            m = _INSTR_RE.match(text)
            if not m:
                continue
            op, rest = m.group(2), m.group(3)
            names = set(_NAME_RE.findall(rest)) & set(alias)
            if not names:
                continue
            ok: set[str] = set()
            if op == "store" and not rest.startswith("volatile"):
                ms = _STORE_RE.match(rest)
                if ms:
                    ok = {ms.group(3)} - set(_NAME_RE.findall(ms.group(2)))
            elif op == "load" and not rest.startswith(("volatile", "atomic")):
                ml = _LOAD_RE.match(rest)
                if ml:
                    ok = {ml.group(2)}
            elif backoff.is_hook(op, rest):
                ok = names
            for n in names - ok:
                alias.pop(n, None)
        # a reference slot counts only when every pointer loaded from it is such an address
        bad = {slot for ptr, slot in loads.items() if slot in stored and ptr not in alias
               and next(iter(stored[slot])) in allocas}
        alias = {ptr: b for ptr, b in alias.items() if loads[ptr] not in bad}
        self.references = {loads[ptr]: b for ptr, b in alias.items()}
        return alias, const_load

    def _static_dead(self) -> set[tuple[str, str]]:
        """Edges never taken whatever the loop does: the other cases of a switch over a slot
        every store sets to one constant (clang -O0's memory order), an order helper's unwind."""
        dead = set()
        for b in self.blocks:
            if not b.lines:
                continue
            m = _INSTR_RE.match(b.lines[-1][1])
            if not m:
                continue
            if m.group(2) == "switch":
                ms = _SWITCH_RE.match(m.group(3))
                const = self.const_load.get(ms.group(2)) if ms else None
                if ms is None or const is None or const.startswith("@"):
                    continue
                bits = int(ms.group(1)[1:])
                cases = [(int(c), t) for c, t in _CASE_RE.findall(ms.group(4))]
                want = int(const) & ((1 << bits) - 1)
                target = next((t for c, t in cases if c & ((1 << bits) - 1) == want), ms.group(3))
                dead |= {(b.name, t) for t in [ms.group(3)] + [t for _, t in cases] if t != target}
            elif m.group(2) == "invoke":
                mi = _INVOKE_RE.match(m.group(3))
                if mi and _ORDER_HELPER_RE.match(mi.group(1)):
                    dead.add((b.name, mi.group(3)))
        return dead

    def slot_of(self, ptr: str) -> str | None:
        """The private slot a load or store address is: the slot, or a reference to it."""
        return ptr if ptr in self.slots else self.alias.get(ptr)

    def _private_slots(self) -> set[str]:
        slots = {m.group(1) for b in self.blocks for _, t in b.lines for m in [_ALLOCA_RE.match(t)] if m}
        ref_slots = self.references      # reference slot -> the slot it holds the address of
        for b in self.blocks:
            for _, text in b.lines:
                if _ALLOCA_RE.match(text):
                    continue
                names = set(_NAME_RE.findall(text)) & slots
                if not names:
                    continue
                m = _INSTR_RE.match(text)
                op, rest = (m.group(2), m.group(3)) if m else ("", "")
                ok: set[str] = set()
                if op == "store" and not rest.startswith("volatile"):
                    ms = _STORE_RE.match(rest)
                    if ms and ms.group(2).strip() not in slots:
                        ok = {ms.group(3)}
                    elif ms and ref_slots.get(ms.group(3)) == ms.group(2).strip():
                        ok = names      # `store ptr %old, ptr %ref`: a reference to a slot
                elif op == "load" and not rest.startswith(("volatile", "atomic")):
                    ml = _LOAD_RE.match(rest)
                    if ml:
                        ok = {ml.group(2)}
                elif backoff.is_lifetime(op, rest) or backoff.is_hook(op, rest):
                    ok = names
                slots -= names - ok
        return slots

    # --- liveness of SSA values and slot contents ("mem", slot) -------------------------

    def uses_defs(self, text: str) -> tuple[list, list]:
        m = _INSTR_RE.match(text)
        if not m:
            return [], []
        result, op, rest = m.groups()
        defs = [result] if result else []
        if op == "store":
            ms = _STORE_RE.match(rest)
            if ms and self.slot_of(ms.group(3)):
                used = [n for n in _NAME_RE.findall(ms.group(2)) if n in self.locals]
                return used, [("mem", self.slot_of(ms.group(3)))]
        if op == "load":
            ml = _LOAD_RE.match(rest)
            if ml and self.slot_of(ml.group(2)):
                return [("mem", self.slot_of(ml.group(2)))], defs
        if op == "phi":
            return [], defs
        return [n for n in _NAME_RE.findall(rest) if n in self.locals], defs

    @property
    def live_in(self) -> dict:
        return self._liveness()[0]

    @property
    def live_out(self) -> dict:
        return self._liveness()[1]

    def _liveness(self) -> tuple[dict[str, set], dict[str, set]]:
        if self._live is not None:
            return self._live
        gen: dict[str, set] = {}
        kill: dict[str, set] = {}
        phi_uses: dict[str, set] = {b.name: set() for b in self.blocks}   # used at the end of pred
        for b in self.blocks:
            g, k = set(), set()
            for _, text in b.lines:
                m = _INSTR_RE.match(text)
                if m and m.group(2) == "phi":
                    for value, pred in _PHI_RE.findall(m.group(3)):
                        if value.strip() in self.locals:
                            phi_uses.setdefault(pred, set()).add(value.strip())
                uses, defs = self.uses_defs(text)
                g |= {u for u in uses if u not in k}
                k |= set(defs)
            gen[b.name], kill[b.name] = g, k
        live_in: dict[str, set] = {b.name: set() for b in self.blocks}
        live_out: dict[str, set] = {b.name: set() for b in self.blocks}
        self._live = (live_in, live_out)
        changed = True
        while changed:
            changed = False
            for b in reversed(self.blocks):
                out = set(phi_uses.get(b.name, ()))
                for s in b.succs:
                    out |= live_in.get(s, set())
                inn = gen[b.name] | (out - kill[b.name])
                if out != live_out[b.name] or inn != live_in[b.name]:
                    live_out[b.name], live_in[b.name] = out, inn
                    changed = True
        return self._live

    def live_before(self, block: _Block, index: int) -> set:
        live = set(self.live_out[block.name])
        for i, text in reversed(block.lines):
            uses, defs = self.uses_defs(text)
            live -= set(defs)
            live |= set(uses)
            if i == index:
                break
        return live

    def uses_outside(self, name, blocks: set[str]) -> bool:
        """Whether an SSA name or a slot's content (("mem", slot)) is used after blocks (the
        loop): live into a block reachable from them outside them. Blocks before the loop
        only reach it (the counter is live there because the loop reads it)."""
        after, todo = set(), [s for b in blocks for s in self.by_name[b].succs if s not in blocks] \
            if all(b in self.by_name for b in blocks) else [b.name for b in self.blocks]
        while todo:
            b = todo.pop()
            if b in after or b in blocks or b not in self.by_name:
                continue
            after.add(b)
            todo.extend(self.by_name[b].succs)
        return any(name in self.live_in[b] for b in after)


class _Walk:
    def __init__(self, fn: _Fn, load_index: int):
        self.fn = fn
        self.load_index = load_index
        self.start = fn.block_of[load_index]
        self.widen: dict[int, set] = {}
        self.paths = 0
        self.retry_only = False     # _RetryWalk: starts at an attempt, may come back to it

    def value(self, env, text: str):
        text = text.strip()
        if text in ("true", "false"):
            return ("int", 1 if text == "true" else 0)
        if re.fullmatch(r"-?\d+", text):
            return ("int", int(text))
        if text in ("null", "poison", "undef"):
            return ("const", text)
        if text in self.fn.const_load:
            const = self.fn.const_load[text]
            return ("ext", const) if const.startswith("@") else ("int", int(const))
        if text in self.fn.locals:
            return env.get(text, ("ext", text))
        if text.startswith("@"):
            return ("ext", text)
        raise _Reject("operand " + text)

    def generic(self, env, op: str, rest: str):
        args = []

        def repl(m):
            name = m.group(0)
            if name in self.fn.locals:
                args.append(env.get(name, ("ext", name)))
                return "{}"
            return name
        template = op + " " + _NAME_RE.sub(repl, rest)
        return ("op", template, tuple(args))

    # --- the pure instructions, with the few rewrites that keep the CAS outcome visible ---

    def pure(self, env, op: str, rest: str):
        parts = [p.strip() for p in rest.split(",")]
        if op == "extractvalue":
            m = re.match(r'^\{ [^}]* \} (\S+), ([01])$', rest)
            if m:
                v = self.value(env, m.group(1))
                if v[0] == "pair":
                    return ("read", v[1]) if m.group(2) == "0" else ("ok", v[1], True)
        if op == "bitcast":
            # a round trip through another type of one size is the value itself: libstdc++'s
            # floating-point atomics read and compare an i64 that they hold as a double
            m = re.match(r'^(\S+) (\S+) to (\S+)$', rest)
            if m:
                v = self.value(env, m.group(2))
                inner = re.match(r'^bitcast (\S+) \{\} to (\S+)$', v[1]) if v[0] == "op" and len(v[2]) == 1 else None
                if inner and inner.group(1) == m.group(3) and inner.group(2) == m.group(1):
                    return v[2][0]
        if op == "select" and len(parts) == 3:
            # select(attempt k succeeded, f(read k-1), f(read k)) is f(read k): a success means
            # read k equals what the attempt expected, read k-1 (checked by _attempt), and f
            # is pure; libstdc++'s compare_exchange hands on `expected` that way for a double
            c = self.value(env, parts[0].split()[-1])
            if c[0] == "ok" and c[1] >= 1:
                a, b = self.value(env, parts[1].split()[-1]), self.value(env, parts[2].split()[-1])
                success, failure = (a, b) if c[2] else (b, a)
                k = c[1]
                if _contains(failure, lambda x: x == ("read", k)) and \
                        _subst(success, {("read", k - 1): ("read", k)}) == failure:
                    return failure
        if op == "zext" and rest.startswith("i1 "):
            v = self.value(env, rest.split()[1])
            if v[0] == "ok":
                return ("b2i", v)
        if op == "trunc" and rest.endswith(" to i1"):
            v = self.value(env, rest.split()[1])
            if v[0] == "b2i":
                return v[1]
        if op == "xor" and rest.startswith("i1 ") and len(parts) == 2:
            a, b = self.value(env, parts[0][3:]), self.value(env, parts[1])
            if a == ("int", 1):
                a, b = b, a
            if b == ("int", 1) and a[0] == "ok":
                return ("ok", a[1], not a[2])
        if op == "icmp":
            m = re.match(r'^(eq|ne) (\S+) ([^,]+), (\S+)$', rest)
            if m:
                a, b = self.value(env, m.group(3)), self.value(env, m.group(4))
                if a[0] == "int":
                    a, b = b, a
                if b in (("int", 0), ("int", 1)) and a[0] in ("b2i", "ok"):
                    p = a[1] if a[0] == "b2i" else a
                    keep = (m.group(1) == "ne") == (b == ("int", 0))
                    return p if keep else ("ok", p[1], not p[2])
        return self.generic(env, op, rest)

    # --- the walk -------------------------------------------------------------------------

    def run(self) -> CasLoop:
        for _ in range(MAX_WIDEN + 1):
            try:
                return self._run_once()
            except _Widen:
                continue
        raise _Reject("state does not settle")

    def _dominating_prefix(self, env: dict, mem: dict) -> None:
        """The blocks that run right before the start block, each the only (live) predecessor
        of the next, evaluated in order as straight-line code: at clang -O0 the first read sits
        in one case of a switch over its memory order, after the blocks that store `this` and
        the orders into slots, and the attempt reloads the pointer from those slots (without
        them the two pointers were different unknowns: "another location")."""
        chain: list[_Block] = []
        name = self.start.name
        seen = {name}
        while len(chain) < MAX_PATH_BLOCKS:
            preds = {p for p in self.fn.preds.get(name, set()) if (p, name) not in self.fn.static_dead}
            if len(preds) != 1:
                break
            (name,) = preds
            if name in seen or name not in self.fn.by_name:
                break
            seen.add(name)
            chain.append(self.fn.by_name[name])
        for block in reversed(chain):
            for _, text in block.lines[:-1]:
                m = _INSTR_RE.match(text)
                if m:
                    self._straight_line(env, mem, *m.groups())

    def _straight_line(self, env: dict, mem: dict, result: str | None, op: str, rest: str) -> None:
        """An instruction before the first read: only slot stores, slot loads and pure values
        matter there (a call cannot change a slot that never escapes)."""
        if op == "store":
            ms = _STORE_RE.match(rest)
            if ms and ms.group(3) in self.fn.slots:
                mem[ms.group(3)] = self.value(env, ms.group(2))
        elif op == "load" and result:
            ml = _LOAD_RE.match(rest)
            if ml and ml.group(2) in self.fn.slots:
                env[result] = mem[ml.group(2)]
        elif op in _PURE and result:
            env[result] = self.pure(env, op, rest)

    def _run_once(self) -> CasLoop:
        self.seen: dict[int, set] = {}
        self.attempts: list[int] = []
        self.walked: set[str] = set()
        self.dead: set[tuple[str, str]] = set()     # edges a constant decided against
        self.order_rank = None
        self.paths = 0
        env: dict = {}
        mem = {s: ("entry", s) for s in self.fn.slots}
        block = self.start
        pos = 0
        self._dominating_prefix(env, mem)
        # the part of the block before the first read: only its slot stores matter (a call
        # cannot change a slot that never escapes)
        for i, (index, text) in enumerate(block.lines):
            if index == self.load_index:
                pos = i
                break
            m = _INSTR_RE.match(text)
            if not m:
                continue
            result, op, rest = m.groups()
            self._straight_line(env, mem, result, op, rest)
        m = _INSTR_RE.match(block.lines[pos][1])
        if m is None:
            raise _Reject("not an instruction")
        result, _, rest = m.groups()
        ml = _ALOAD_RE.match(rest)
        if not ml or not result:
            raise _Reject("not an atomic load")
        self.pointer = self.value(env, ml.group(2))
        self.load_rank = _READ_RANK[ml.group(3)]
        env[result] = ("read", 0)
        self._walk(block, pos + 1, env, mem, 0, {}, 0)
        if not self.attempts:
            raise _Reject("no attempt")
        dead = self._dead_blocks()
        for b in self.walked:
            if b != self.start.name and not self.fn.preds.get(b, set()) <= self.walked | {self.start.name} | dead:
                raise _Reject("the loop is entered elsewhere")
        loop_blocks = self.walked | {self.start.name} | dead
        for cas, keys in self.widen.items():
            for key in keys:
                if self.fn.uses_outside(key, loop_blocks):
                    raise _Reject("a counter is used after the loop")
        where = self.pointer[1] if self.pointer[0] == "ext" and self.pointer[1].startswith("@") else ""
        return CasLoop(self.load_index, tuple(sorted(self.attempts)), where)

    def _dead_blocks(self) -> set[str]:
        """Blocks entered only through edges a constant decided against (or from such
        blocks): the other cases of clang -O0's switches over a memory order."""
        dead: set[str] = set()
        changed = True
        while changed:
            changed = False
            edges = self.dead | self.fn.static_dead
            for b in {t for _, t in edges} | {s for d in dead for s in self.fn.by_name[d].succs}:
                if b in dead or b in self.walked or b == self.start.name:
                    continue
                preds = self.fn.preds.get(b, set())
                if preds and all((p, b) in edges or p in dead for p in preds):
                    dead.add(b)
                    changed = True
        return dead

    def _walk(self, block, pos, env, mem, last, ok, depth) -> None:
        """last: the number of the latest read; ok: attempt -> known outcome on this path."""
        self.paths += 1
        if depth > MAX_PATH_BLOCKS or self.paths > MAX_PATHS:
            raise _Reject("too many paths")
        self.walked.add(block.name)
        env, mem, ok = dict(env), dict(mem), dict(ok)
        lines = block.lines
        for i in range(pos, len(lines) - 1):
            index, text = lines[i]
            m = _INSTR_RE.match(text)
            if not m:
                raise _Reject("unparsed " + text)
            result, op, rest = m.groups()
            if op == "cmpxchg":
                if last and ok.get(last) is not False:
                    raise _Reject("an attempt after one whose outcome is unknown")
                if not self._attempt(block, index, rest, env, mem, last):
                    return          # the state was seen at this attempt already
                last += 1
                depth = 0           # the path limit is per segment between attempts
                if result:
                    env[result] = ("pair", last)
                continue
            self._step(result, op, rest, env, mem)
        index, term = lines[-1]
        m = _INSTR_RE.match(term)
        if m and m.group(2) == "switch":
            targets = self._switch_targets(m.group(3), block, env)
            for target in targets:
                self._edge(target, block, env, mem, last, ok, depth)
            return
        if m and m.group(2) == "invoke":
            target = self._constant_target(m.group(1), m.group(2), m.group(3), block, env)
            return self._edge(target, block, env, mem, last, ok, depth)
        if not m or m.group(2) != "br":
            raise _Reject("leaves the loop without success: " + term.strip())
        rest = m.group(3)
        mb = _BR_RE.match(rest)
        if mb:
            return self._edge(mb.group(1), block, env, mem, last, ok, depth)
        mc = _BR_COND_RE.match(rest)
        if not mc:
            raise _Reject("branch " + rest)
        cond = self.value(env, mc.group(1))
        for taken, target in ((True, mc.group(2)), (False, mc.group(3))):
            if cond[0] == "int":
                if (cond[1] != 0) == taken:
                    self._edge(target, block, env, mem, last, ok, depth)
                else:
                    self.dead.add((block.name, target))
                continue
            if cond[0] == "ok":
                k, holds = cond[1], cond[2] == taken
                if k in ok and ok[k] is not None and ok[k] != holds:
                    continue
                narrowed = dict(ok)
                narrowed[k] = holds
                if k == last and holds:     # the latest attempt succeeded: the loop is done
                    self._check_exit(target, block, env, mem, last)
                    continue
                self._edge(target, block, env, mem, last, narrowed, depth)
                continue
            self._edge(target, block, env, mem, last, ok, depth)

    def _constant_target(self, result, op, rest, block, env) -> str:
        """clang -O0's std::atomic members: an invoke of a memory-order helper (it cannot
        throw: its normal edge) and a switch over a memory order held in a slot (the case of
        that constant); the edges not taken are dead (_entered_only_by)."""
        if op == "invoke":
            m = _INVOKE_RE.match(rest)
            if not m:
                raise _Reject("invoke")
            env_result = self._order_helper(m.group(1), env)
            if result:
                env[result] = env_result
            self.dead.add((block.name, m.group(3)))
            return m.group(2)
        m = _SWITCH_RE.match(rest)
        value = self.value(env, m.group(2)) if m else None
        if m is None or value is None or value[0] != "int":
            raise _Reject("switch")
        bits = int(m.group(1)[1:])
        cases = [(int(c), t) for c, t in _CASE_RE.findall(m.group(4))]
        want = value[1] & ((1 << bits) - 1)
        target = next((t for c, t in cases if c & ((1 << bits) - 1) == want), m.group(3))
        for t in [m.group(3)] + [t for _, t in cases]:
            if t != target:
                self.dead.add((block.name, t))
        return target

    def _switch_targets(self, rest, block, env) -> list[str]:
        """A switch over a constant takes its case (the others are dead edges: clang -O0's
        std::atomic). A switch over a value no read of the loop gave (a memory order passed
        as an argument: libstdc++'s out-of-line `__fetch_add_flt(ptr, v, order)` switches over
        it around one compare-exchange per order) is followed into every target, like a
        conditional branch on such a value: each attempt reached is checked on its own (the
        same location, the value read last, the rank condition with its own orders)."""
        m = _SWITCH_RE.match(rest)
        if m is None:
            raise _Reject("switch")
        value = self.value(env, m.group(2))
        if value[0] == "int":
            return [self._constant_target(None, "switch", rest, block, env)]
        if _contains(value, lambda x: _is_read(x) or x[0] == "top"):
            raise _Reject("a switch over a value read or a counter")
        targets = [m.group(3)] + [t for _, t in _CASE_RE.findall(m.group(4))]
        return list(dict.fromkeys(targets))

    def _order_helper(self, call: str, env):
        m = _ORDER_HELPER_RE.match(call)
        if not m:
            raise _Reject("call " + call.split("(")[0])
        args = [self.value(env, a.split()[-1]) for a in backoff._split_args(m.group(2))]
        if not all(a[0] == "int" for a in args):
            raise _Reject("a memory order that is not a constant")
        if m.group(1).startswith("_ZStan"):
            return ("int", args[0][1] & args[1][1])
        return ("int", {4: 2, 3: 0}.get(args[0][1], args[0][1]))   # acq_rel -> acquire, release -> relaxed

    def _edge(self, target, source, env, mem, last, ok, depth) -> None:
        if target == self.start.name and not self.retry_only:
            raise _Reject("back to the first read")
        block = self.fn.by_name.get(target)
        if block is None:
            raise _Reject("unknown block")
        env = dict(env)
        pos = 0
        for pos, (_, text) in enumerate(block.lines):
            m = _INSTR_RE.match(text)
            if not m or m.group(2) != "phi":
                break
            incoming = {p: v for v, p in _PHI_RE.findall(m.group(3))}
            if source.name not in incoming:
                raise _Reject("phi without the edge")
            env[m.group(1)] = self.value(env, incoming[source.name])
        if last and last not in ok:
            ok = dict(ok)
            ok[last] = None
        self._walk(block, pos, env, mem, last, ok, depth + 1)

    def _check_exit(self, target, source, env, mem, last) -> None:
        """After the success of attempt `last`, what the code after it may use is a function
        of the value that attempt read (read `last`, or `last - 1`, which it equals), never of
        an older read or of a counter. The success path is followed while it stays in the
        loop's blocks and its branches are decided (at -O0 it runs through the loop's
        condition block); the check is made where it leaves them (liveness over-approximates
        the uses, so checking earlier is only stricter)."""
        ok = {("read", last), ("read", last - 1), ("pair", last)}
        known = {last: True}
        in_loop = _reaching(self.fn, {self.fn.block_of[a].name for a in self.attempts})
        for _ in range(MAX_PATH_BLOCKS):
            block = self.fn.by_name.get(target)
            if block is None:
                raise _Reject("unknown block")
            env = dict(env)
            phis = set()
            pos = 0
            for pos, (_, text) in enumerate(block.lines):
                m = _INSTR_RE.match(text)
                if not m or m.group(2) != "phi":
                    break
                incoming = {p: v for v, p in _PHI_RE.findall(m.group(3))}
                if source.name in incoming:
                    env[m.group(1)] = self.value(env, incoming[source.name])
                    phis.add(m.group(1))
            live = self.fn.live_in[target] | phis
            nxt = None
            if target in in_loop and target != self.start.name:
                mem = dict(mem)
                try:
                    for index, text in block.lines[pos:-1]:
                        m = _INSTR_RE.match(text)
                        if not m or m.group(2) == "cmpxchg":
                            raise _Reject("stop")
                        self._step(m.group(1), m.group(2), m.group(3), env, mem)
                    m = _INSTR_RE.match(block.lines[-1][1])
                    mc = _BR_COND_RE.match(m.group(3)) if m and m.group(2) == "br" else None
                    mb = _BR_RE.match(m.group(3)) if m and m.group(2) == "br" else None
                    if mb:
                        nxt = mb.group(1)
                    elif mc:
                        cond = self.value(env, mc.group(1))
                        if cond[0] == "ok" and cond[1] in known:
                            nxt = mc.group(2) if known[cond[1]] == cond[2] else mc.group(3)
                        elif cond[0] == "int":
                            nxt = mc.group(2) if cond[1] else mc.group(3)
                except _Reject:
                    nxt = None
            if nxt is not None:
                source, target = block, nxt
                continue
            for key in live:
                v = mem.get(key[1]) if isinstance(key, tuple) else env.get(key)
                if v is None:
                    continue
                if _contains(v, lambda x: x[0] == "top" or (_is_read(x) and x[:2] not in ok
                                                             and x[0] != "ok")):
                    raise _Reject("the loop hands on a value of an earlier attempt or a counter")
            return
        raise _Reject("success path too long")

    def _step(self, result, op, rest, env, mem) -> None:
        if op in ("store", "call") and backoff.is_inert(op, rest, self.fn.sleep_slots.get):
            if result:
                env[result] = ("ext", result)
            return
        if op in _PURE:
            if result:
                env[result] = self.pure(env, op, rest)
            return
        if op == "store":
            ms = _STORE_RE.match(rest)
            if not ms or not self.fn.slot_of(ms.group(3)):
                raise _Reject("a store to shared memory")
            mem[self.fn.slot_of(ms.group(3))] = self.value(env, ms.group(2))
            return
        if op == "load":
            ml = _LOAD_RE.match(rest)
            if not ml or not self.fn.slot_of(ml.group(2)):
                raise _Reject("a read of shared memory")
            env[result] = self.value(env, result) if result in self.fn.const_load else mem[self.fn.slot_of(ml.group(2))]
            return
        if op == "call":
            if _ORDER_HELPER_RE.match(rest):
                if result:
                    env[result] = self._order_helper(rest, env)
                return
            if _PURE_INTRINSIC_RE.match(rest):
                env[result] = self.generic(env, op, rest)
                return
        raise _Reject("instruction " + op)

    def _attempt(self, block, index, rest, env, mem, last) -> bool:
        m = _CMPXCHG_RE.match(rest)
        if not m:
            raise _Reject("cmpxchg")
        if self.value(env, m.group(2)) != self.pointer:
            raise _Reject("another location")
        if self.value(env, m.group(4)) != ("read", last):
            raise _Reject("the attempt does not expect the value read last")
        succ, fail = _READ_RANK[m.group(6)], _READ_RANK[m.group(7)]
        if self.load_rank > succ or fail > succ:
            raise _Reject("a read of the loop is ordered more strongly than its success")
        live = self.fn.live_before(block, index)
        ren = {("read", last): ("R",), ("pair", last): ("PAIRR",), ("ok", last, True): ("OKR", True),
               ("ok", last, False): ("OKR", False)}
        state = {}
        for key in live:
            v = mem[key[1]] if isinstance(key, tuple) else env.get(key, ("ext", key))
            state[key] = _subst(v, ren)
            if _contains(state[key], _is_read):
                raise _Reject("a value read by an earlier attempt is still live")
        for key in self.widen.get(index, ()):
            state[key] = ("top", key)
            if isinstance(key, tuple):
                mem[key[1]] = ("top", key)
            else:
                env[key] = ("top", key)
        desired = self.value(env, m.group(5))
        if _contains(desired, lambda v: v[0] == "top"):
            raise _Reject("the desired value depends on a counter")
        if index not in self.attempts:
            self.attempts.append(index)
        frozen = frozenset(state.items())
        states = self.seen.setdefault(index, set())
        if frozen in states:
            return False
        if len(states) < MAX_STATES:
            states.add(frozen)
            return True
        # more and more states: values that change from iteration to iteration (a counter)
        # become unknown, unless they carry a value read
        known = [dict(st) for st in states] + [state]
        differ = {k for st in known for k in st if any(o.get(k) != st[k] for o in known)}
        for k in differ:
            for st in known:
                v = st.get(k)
                if v is not None and _contains(v, lambda x: _is_read(x) or x[0] in ("R", "OKR")):
                    raise _Reject("a failed iteration leaves a value read behind")
        self.widen.setdefault(index, set()).update(differ)
        raise _Widen()


def _reaching(fn: _Fn, targets: set[str]) -> set[str]:
    """Blocks from which one of targets is reachable (targets included)."""
    seen, todo = set(targets), list(targets)
    while todo:
        for p in fn.preds.get(todo.pop(), ()):
            if p not in seen:
                seen.add(p)
                todo.append(p)
    return seen


class _Widen(Exception):
    pass


class _RetryWalk(_Walk):
    """From a compare-exchange: does its failure only feed a retry? Every path after a
    failure must reach another attempt on the same location that expects the value the
    failure read, with only pure code (no effect) in between and no older read live."""

    def run(self) -> CasLoop:
        self.retry_only = True
        block = self.start
        env: dict = {}
        mem = {s: ("entry", s) for s in self.fn.slots}
        self.seen, self.attempts, self.walked, self.paths = {}, [], set(), 0
        self.dead = set()
        pos = 0
        self._dominating_prefix(env, mem)
        for i, (index, text) in enumerate(block.lines):
            m = _INSTR_RE.match(text)
            if not m:
                continue
            result, op, rest = m.groups()
            if index == self.load_index:
                pos = i
                mc = _CMPXCHG_RE.match(rest)
                if not mc:
                    raise _Reject("not a cmpxchg")
                self.pointer = self.value(env, mc.group(2))
                if result:
                    env[result] = ("pair", 1)
                break
            self._straight_line(env, mem, result, op, rest)
        self._walk(block, pos + 1, env, mem, 1, {}, 0)
        if not self.attempts:
            raise _Reject("no retry")
        return CasLoop(self.load_index, tuple(self.attempts))

    def _check_exit(self, target, source, env, mem, last) -> None:
        return

    def _attempt(self, block, index, rest, env, mem, last) -> bool:
        m = _CMPXCHG_RE.match(rest)
        if not m or self.value(env, m.group(2)) != self.pointer:
            raise _Reject("another location")
        if self.value(env, m.group(4)) != ("read", last):
            raise _Reject("the retry does not expect the value read")
        live = self.fn.live_before(block, index)
        for key in live:
            v = mem[key[1]] if isinstance(key, tuple) else env.get(key, ("ext", key))
            if _contains(v, lambda x: _is_read(x) and x[:2] not in (("read", last), ("pair", last))
                         and x[0] != "ok"):
                raise _Reject("an older value read is still live")
        self.attempts.append(index)
        return False


def analyse(lines: list[str], header: str) -> "_Fn | None":
    """The per-function analysis both finders share (None when the body has no cmpxchg)."""
    return _Fn(lines, header) if any("cmpxchg" in t for t in lines) else None


def find_retry_cas(lines: list[str], header: str, skip: AbstractSet[int] = frozenset(),
                   fn: "_Fn | None" = None) -> list[int]:
    """Compare-exchanges whose failure only feeds a retry of the same location (a report
    that can only be a failure of such a CAS has no consequence: `failed-cas`)."""
    if not any("cmpxchg" in t for t in lines):
        return []
    found = []
    for i, text in enumerate(lines):
        if i in skip or "cmpxchg" not in text:
            continue
        if fn is None:
            fn = _Fn(lines, header)
        if i not in fn.block_of:
            continue
        try:
            _RetryWalk(fn, i).run()
        except Exception:   # anything not proved is analysed as written
            continue
        found.append(i)
    return found


def find_cas_loops(lines: list[str], header: str, skip: AbstractSet[int] = frozenset(),
                   fn: "_Fn | None" = None) -> list[CasLoop]:
    """The CAS retry loops of one function body (module docstring); skip: atomic loads that
    are already something else (a spin loop); fn: the function's analysis, when shared."""
    if not any("cmpxchg" in t for t in lines):
        return []
    found: list[CasLoop] = []
    taken: set[int] = set()
    for i, text in enumerate(lines):
        if i in skip or "load atomic" not in text:
            continue
        if fn is None:
            fn = _Fn(lines, header)
        if i not in fn.block_of:
            continue
        try:
            loop = _Walk(fn, i).run()
        except Exception:   # anything not proved is analysed as written
            continue
        if taken & set(loop.attempts):
            continue
        taken |= set(loop.attempts)
        found.append(loop)
    return found

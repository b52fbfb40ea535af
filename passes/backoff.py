"""What a wait loop or a CAS retry loop may do between attempts without an effect the analysis
must see (issue 19 item 1): pause hints, yields, sleeps and their back-off state, and the race
hooks of the function's own stack slots. One definition for spinloops.py and casloops.py.

- *Inert calls*: a pause hint (`llvm.x86.sse2.pause`, `llvm.aarch64.hint`, inline asm that is
  exactly `pause`, `rep; nop` or `yield`), a yield (`sched_yield`, `thrd_yield`,
  `pthread_yield`, `std::this_thread::yield`, `__gthread_yield`) or a sleep (`usleep`,
  `sleep`, `nanosleep`, `clock_nanosleep`, `thrd_sleep`, `std::this_thread::sleep_for`). None
  of them reads or writes memory the program can see, except the sleeps' pointer arguments
  (the time to sleep, read; the time left, written): each of those must be a *sleep slot* or
  null, so what they read or write is nothing the program ever reads back. Their integer
  arguments (a back-off delay) and results only change timing.
- *Race hooks* (`__rsan_read_N` / `__rsan_write_N` / `_range`, inserted before optimisation
  when a slot's address still went to a call, e.g. `compare_exchange_weak(old, ...)` by
  reference) only check for races; on a slot no other thread can reach they never report. A
  hook stays where it is; the loop analyses only need to know it has no effect they model.
- *Sleep slot*: an alloca of the function whose address is used only as the destination of
  stores (directly or through `getelementptr` of it), of `llvm.memcpy` / `llvm.memset`, by
  lifetime markers and race hooks, and as a pointer argument of a sleep. The program never
  reads it (no load, no other call), so a store to it, a `getelementptr` of it and a sleep
  are inert: `struct timespec ts = {0, delay}; nanosleep(&ts, NULL);`.
"""
from __future__ import annotations

import re

_NAME = r'%[-\w.$]+|%"[^"]*"'
_NAME_RE = re.compile(_NAME)
_INSTR_RE = re.compile(r'^  (?:(%s) = )?(?:(?:tail|musttail|notail) )?([a-z_]+)\b ?(.*)$' % _NAME)
_ALLOCA_RE = re.compile(r'^  (%s) = alloca ' % _NAME)
_TRAILER_RE = re.compile(r'(?:, (?:!dbg|!llvm\.loop|!\w[\w.]*) ![0-9]+)+$')

YIELDS = ("sched_yield", "thrd_yield", "pthread_yield", "_ZNSt11this_thread5yieldEv", "__gthread_yield")
SLEEPS = ("usleep", "sleep", "nanosleep", "clock_nanosleep", "thrd_sleep")
# std::this_thread::sleep_for<Rep, Period>(const duration&) and libstdc++'s out-of-line helper
SLEEP_PREFIXES = ("_ZNSt11this_thread9sleep_for", "_ZNSt11this_thread11__sleep_for")
_HINTS = ("llvm.x86.sse2.pause", "llvm.aarch64.hint")
_HINT_ASM = ("pause", "rep; nop", "rep nop", "yield")

# `call void @llvm.x86.sse2.pause()`   `%5 = tail call i32 @nanosleep(ptr %3, ptr null)`
_CALLEE_RE = re.compile(r'^(?:[\w()]+ )*(?:i\d+|void|ptr) (?:\([^)]*\) )?@([-\w.$]+)\((.*)\)(?: #\d+)?$')
# `call void asm sideeffect "pause", "~{memory},~{dirflag},~{fpsr},~{flags}"()`
_ASM_RE = re.compile(r'^(?:[\w()]+ )*void asm (?:sideeffect )?(?:inteldialect )?"([^"]*)", "([^"]*)"\(\)')
_HOOK_RE = re.compile(r'^(?:[\w()]+ )*void @__rsan_(?:read|write)_(?:1|2|4|8|16|range)\((?:ptr[^%%]*)(%s)[,)]'
                      % _NAME)
_MEMSET_CPY_RE = re.compile(r'^(?:[\w()]+ )*void @llvm\.(?:memcpy|memset|memmove)\.[\w.]+\(ptr[^%%,]*(%s),'
                            % _NAME)
_STORE_RE = re.compile(r'^(?:volatile )?(\S+) ([^,]+), ptr (%s), align' % _NAME)
_GEP_RE = re.compile(r'^(?:inbounds |nuw |nusw )*[^,]+, ptr (%s)(?:,|$)' % _NAME)


def _callee(rest: str) -> tuple[str, str] | None:
    m = _CALLEE_RE.match(rest)
    return (m.group(1), m.group(2)) if m else None


def is_hint_or_yield(op: str, rest: str) -> bool:
    """A call with no memory effect at all (pause hint, yield)."""
    if op != "call":
        return False
    m = _ASM_RE.match(rest)
    if m:
        clobbers = [c for c in m.group(2).split(",") if c]
        return m.group(1).strip() in _HINT_ASM and all(c.startswith("~{") for c in clobbers)
    c = _callee(rest)
    return c is not None and (c[0] in _HINTS or c[0] in YIELDS)


def is_sleep(name: str) -> bool:
    return name in SLEEPS or name.startswith(SLEEP_PREFIXES)


def is_hook(op: str, rest: str) -> bool:
    return op == "call" and bool(_HOOK_RE.match(rest))


def is_lifetime(op: str, rest: str) -> bool:
    return op == "call" and "@llvm.lifetime." in rest


def sleep_slots(lines: list[str]) -> set[str]:
    """The allocas used only as written-to memory and sleep arguments (module docstring)."""
    slots = {m.group(1) for m in map(_ALLOCA_RE.match, lines) if m}
    if not slots:
        return slots
    derived: dict[str, str] = {}    # a getelementptr of a slot -> the slot
    uses: list[tuple[str, str, str, str]] = []
    for text in lines:
        if _ALLOCA_RE.match(text) or text.lstrip().startswith(("#dbg_", ";")):
            continue
        text = _TRAILER_RE.sub("", text.rstrip())
        m = _INSTR_RE.match(text)
        if not m:
            # continuation lines and the rest: any slot they name is not a sleep slot
            for name in _NAME_RE.findall(text):
                slots.discard(derived.get(name, name))
            continue
        result, op, rest = m.groups()
        if op == "getelementptr":
            g = _GEP_RE.match(rest)
            base = derived.get(g.group(1), g.group(1)) if g else None
            if g is not None and base is not None and base in slots and result:
                derived[result] = base
                others = set(_NAME_RE.findall(rest)) - {g.group(1)}
                for name in others:
                    slots.discard(derived.get(name, name))
                continue
        uses.append((result or "", op, rest, text))
    for result, op, rest, text in uses:
        names = [derived.get(n, n) for n in _NAME_RE.findall(rest)]
        named = set(names) & slots
        if not named:
            continue
        ok: set[str] = set()
        if op == "store":
            ms = _STORE_RE.match(rest)
            if ms and not rest.startswith("volatile"):
                ok = {derived.get(ms.group(3), ms.group(3))}
                value = {derived.get(n, n) for n in _NAME_RE.findall(ms.group(2))}
                ok -= value
        elif op == "call":
            if is_lifetime(op, rest) or is_hook(op, rest):
                ok = named
            else:
                mm = _MEMSET_CPY_RE.match(rest)
                if mm:
                    dest = derived.get(mm.group(1), mm.group(1))
                    others = {derived.get(n, n) for n in _NAME_RE.findall(rest)[1:]}
                    ok = {dest} - others
                else:
                    c = _callee(rest)
                    if c is not None and is_sleep(c[0]):
                        ok = named
        slots -= named - ok
    return slots


def is_inert(op: str, rest: str, derived_of) -> bool:
    """Whether an instruction has no effect the loop analyses model: a hint, a yield, a race
    hook, a lifetime marker, a sleep whose pointer arguments are sleep slots or null, or a
    store to / getelementptr of a sleep slot. derived_of(name) -> the sleep slot a pointer
    SSA name is (a slot itself or a getelementptr of one), else None."""
    if is_hint_or_yield(op, rest) or is_hook(op, rest) or is_lifetime(op, rest):
        return True
    if op == "getelementptr":
        g = _GEP_RE.match(rest)
        return g is not None and derived_of(g.group(1)) is not None
    if op == "store":
        ms = _STORE_RE.match(rest)
        return ms is not None and not rest.startswith("volatile") and derived_of(ms.group(3)) is not None
    if op == "call":
        mm = _MEMSET_CPY_RE.match(rest)
        if mm:      # what it copies into a slot the program never reads does not matter
            return derived_of(mm.group(1)) is not None
        c = _callee(rest)
        if c is None or not is_sleep(c[0]):
            return False
        for arg in _split_args(c[1]):
            if arg.startswith("ptr") and arg.split()[-1] != "null" and derived_of(arg.split()[-1]) is None:
                return False
        return True
    return False


def _split_args(args: str) -> list[str]:
    """The arguments of a call, split at the commas outside parentheses and brackets."""
    out, depth, cur = [], 0, ""
    for ch in args:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def sleep_address_map(lines: list[str], slots: set[str]) -> dict[str, str]:
    """Pointer SSA name -> the sleep slot it addresses (the slot itself or a getelementptr)."""
    derived = {s: s for s in slots}
    for text in lines:
        m = _INSTR_RE.match(text)
        if m and m.group(2) == "getelementptr" and m.group(1):
            g = _GEP_RE.match(m.group(3))
            if g and g.group(1) in derived:
                derived[m.group(1)] = derived[g.group(1)]
    return derived


_VALUE_OPS = frozenset("""add sub mul udiv sdiv urem srem shl lshr ashr and or xor icmp select zext sext
trunc freeze phi""".split())


def _mentions(text: str, name: str) -> bool:
    return re.search(re.escape(name) + r'(?![-\w.$"])', text) is not None


def timing_only(names: set[str], lines: list[str], derived_of) -> bool:
    """Whether the values named (a back-off delay that outlives its loop: `delay *= 2` kept
    for the next wait) reach nothing but timing through lines (the code outside the loop):
    arithmetic and phis whose results do the same, the value of a store to a sleep slot, an
    integer argument of a sleep. A branch, a return, any other store or call is a use the
    program can see (the number of failed attempts would show)."""
    instrs = []
    for text in lines:
        if text.lstrip().startswith(("#dbg_", ";")):
            continue
        m = _INSTR_RE.match(_TRAILER_RE.sub("", text.rstrip()))
        instrs.append(m.groups() if m else (None, "?", text))
    todo, seen = list(names), set(names)
    while todo:
        name = todo.pop()
        for result, op, rest in instrs:
            if not _mentions(rest, name):
                continue
            if op in _VALUE_OPS and result:
                if result not in seen:
                    seen.add(result)
                    todo.append(result)
                continue
            if op == "store":
                ms = _STORE_RE.match(rest)
                if ms and derived_of(ms.group(3)) is not None and not _mentions(ms.group(3), name):
                    continue
            if op == "call":
                c = _callee(rest)
                if c is not None and is_sleep(c[0]) and all(
                        not (a.startswith("ptr") and _mentions(a, name)) for a in _split_args(c[1])):
                    continue
            return False
    return True

"""Stack slots reached through a reference kept in another slot (clang -O0), for the spin-loop
recognition (spinloops.py).

At -O0 clang keeps every local in a stack slot, and a reference or a pointer to a local in a
slot of its own: libstdc++'s `compare_exchange_weak(e, ...)` reads and writes `e` through
`ptr %2` after `store ptr %8, ptr %2`, and the generic `std::atomic<T>::load` (an enum, a
struct) returns the value through a byte buffer whose address it keeps in a slot
(`%8 = getelementptr inbounds [4 x i8], ptr %5, i64 0, i64 0; store ptr %8, ptr %6`). The
recognition follows a failed iteration's effects through private slots only, so such a loop
was not recognised and each stale read of a robust program was a report.

The rule: a slot P is a *reference* to slot S when every store to P stores S's address (S
itself, or S at all-zero indices), P is used otherwise only as the address of loads, and each
value loaded from P is used only as the address of plain, non-volatile loads and stores. Then
every access through such a value is an access of S (P holds nothing else on any path), and
S's address goes nowhere else through P. `canonical_lines` writes those accesses with S's
name, and names the lines that take S's address for P (`exempt`), so that S can still be a
private slot (spinloops.py `_private_slots`) when nothing else takes its address."""
from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = r'%[-\w.$]+|%"[^"]*"'
_NAME_RE = re.compile(_NAME)
_ALLOCA_RE = re.compile(r'^  (%s) = alloca ' % _NAME)
# `  %8 = getelementptr inbounds [4 x i8], ptr %5, i64 0, i64 0`
_ZERO_GEP_RE = re.compile(r'^  (%s) = getelementptr (?:(?:inbounds|nuw|nusw) )*[^,]+, ptr (%s)((?:, i\d+ 0)+)\s*(?:,|$)'
                          % (_NAME, _NAME))
# `  store ptr %8, ptr %2, align 8`
_STORE_PTR_RE = re.compile(r'^  store ptr (%s), ptr (%s), align' % (_NAME, _NAME))
# `  %12 = load ptr, ptr %2, align 8, !nonnull !6`
_LOAD_PTR_RE = re.compile(r'^  (%s) = load ptr, ptr (%s), align' % (_NAME, _NAME))
# `  call void @llvm.lifetime.start.p0(ptr %2)`
_LIFETIME_RE = re.compile(r'^  call void @llvm\.lifetime\.(?:start|end)\.p0\((?:i64 -?\d+, )?ptr (?:%s)\)' % _NAME)
# the race detector's hook on such an access (plain.py, which runs before -O0 accessors are
# inlined: through a parameter then): `  notail call void @__rsan_read_4(ptr %12, i64 7)`
_HOOK_RE = re.compile(r'^  (?:notail |tail )?call void @__rsan_(?:read|write)_(?:1|2|4|8|16)\(ptr (%s), i64 -?\d+\)'
                      % _NAME)
# a plain access through a name: `  %20 = load i32, ptr %19, align 4`, `  store i32 %13, ptr %11, align 4`
_ACCESS_RE = re.compile(r'^(  (?:%s) = load [^,]+, ptr |  store [^,]+, ptr )(%s)(, align.*)$' % (_NAME, _NAME))


def _uses(lines: list[str]) -> dict[str, list[int]]:
    """Name -> the indices of the lines that mention it other than by defining it."""
    uses: dict[str, list[int]] = {}
    for i, text in enumerate(lines):
        if text.lstrip().startswith("#dbg_"):
            continue
        defined = text.split(" = ", 1)[0].strip() if " = " in text else None
        for name in set(_NAME_RE.findall(text)):
            if name != defined:
                uses.setdefault(name, []).append(i)
    return uses


@dataclass(frozen=True)
class Reference:
    """A reference slot's target slot, the lines that store its address into the reference
    (the stores and the zero-index geps they store), and the values loaded from it."""
    target: str
    address_lines: frozenset[int]
    loaded: tuple[str, ...]


def reference_slots(lines: list[str]) -> dict[str, Reference]:
    """Reference slot -> what it refers to (the rule in the module's docstring). A reference
    may also be stored from another reference to the same slot (clang -O0 passes `e` of
    `compare_exchange_weak(e, ...)` down through each inlined level's own slot)."""
    allocas = {m.group(1) for m in map(_ALLOCA_RE.match, lines) if m}
    if not allocas:
        return {}
    uses = _uses(lines)
    zero_gep = {}           # name -> (the slot it is the address of, its line)
    for i, text in enumerate(lines):
        m = _ZERO_GEP_RE.match(text)
        if m and m.group(2) in allocas:
            zero_gep[m.group(1)] = (m.group(2), i)
    stores: dict[str, list[tuple[int, str]]] = {}    # candidate -> (line, value stored)
    loaded_from: dict[str, str] = {}                  # value -> the candidate it was loaded from
    for p in allocas:
        ok, mine, loads = True, [], []
        for i in uses.get(p, []):
            text = lines[i]
            ms, ml = _STORE_PTR_RE.match(text), _LOAD_PTR_RE.match(text)
            if ms and ms.group(2) == p and ms.group(1) != p:
                mine.append((i, ms.group(1)))
            elif ml and ml.group(2) == p and "volatile" not in text.split(",")[0]:
                loads.append(ml.group(1))
            elif not _LIFETIME_RE.match(text):
                ok = False
                break
        if ok and mine and loads:
            stores[p] = mine
            loaded_from.update((x, p) for x in loads)
    # the largest set of candidates that meet the rule together: drop the ones that break it
    # until none does (each round drops one at least)
    while True:
        target: dict[str, str] = {}
        for _ in range(len(stores) + 1):
            for p, mine in stores.items():
                found = {_source(v, allocas, zero_gep, loaded_from, target) for _, v in mine}
                slot = found.pop() if len(found) == 1 else None
                if slot is not None and slot != p:
                    target[p] = slot
        bad = {p for p in stores if p not in target}
        for x, p in loaded_from.items():
            if p in target and not all(_access_or_passed(lines[i], x, target, target[p]) for i in uses.get(x, [])):
                bad.add(p)
        for p, mine in stores.items():
            for i, v in mine:
                if v in zero_gep and any(j != i for j in uses.get(v, [])):
                    bad.add(p)       # a gep stored into the reference is used for nothing else
        if not bad:
            break
        for p in bad:
            del stores[p]
        loaded_from = {x: p for x, p in loaded_from.items() if p in stores}
    refs: dict[str, Reference] = {}
    for p, mine in stores.items():
        address = {i for i, _ in mine} | {zero_gep[v][1] for _, v in mine if v in zero_gep}
        refs[p] = Reference(target[p], frozenset(address),
                            tuple(x for x, q in loaded_from.items() if q == p))
    return refs


def _source(value: str, allocas, zero_gep, loaded_from, target) -> str | None:
    """The slot whose address `value` is: a slot, a slot at zero indices, or a value loaded
    from a reference (None: unknown or not yet known)."""
    if value in allocas:
        return value
    if value in zero_gep:
        return zero_gep[value][0]
    return target.get(loaded_from.get(value, ""))


def _access_or_passed(text: str, name: str, target: dict[str, str], slot: str) -> bool:
    """A use of a value loaded from a reference to `slot`: the address of a plain access, or
    stored into another reference to the same slot."""
    m = _STORE_PTR_RE.match(text)
    if m and m.group(1) == name:
        return target.get(m.group(2)) == slot
    return _is_access_through(text, name)


def canonical_lines(lines: list[str]) -> tuple[list[str], set[int]]:
    """The lines with each plain access through a reference slot's value written as an access
    of the slot it refers to, and the indices of the lines that take a referred slot's
    address for its reference slot (the zero-index geps and the stores into the reference)."""
    refs = reference_slots(lines)
    aliases = {x: ref.target for ref in refs.values() for x in ref.loaded}
    if not aliases:
        return lines, set()
    out = list(lines)
    for i, text in enumerate(lines):
        m = _ACCESS_RE.match(text)
        if m and m.group(2) in aliases:
            out[i] = m.group(1) + aliases[m.group(2)] + m.group(3)
    return out, set().union(*(ref.address_lines for ref in refs.values()))


def _is_access_through(text: str, name: str) -> bool:
    mh = _HOOK_RE.match(text)
    if mh:
        return mh.group(1) == name
    m = _ACCESS_RE.match(text)
    if not m or m.group(2) != name or "volatile" in text.split(",")[0] or " atomic " in text:
        return False
    # a store must not store the address itself
    return name not in _NAME_RE.findall(text[:m.start(2)])

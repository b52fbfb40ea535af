"""Pass: inline assembly. The x86-64 / AArch64 idioms that are atomics or fences are modelled
as the corresponding C11 operation; every other asm that may touch memory gets one warning.

Rules:
- a `lock`-prefixed read-modify-write, `xchg` with a memory operand, `cmpxchg`/`cmpxchg8b`/
  `cmpxchg16b`: a seq_cst RMW (a CAS for cmpxchg) on the memory operand. The asm itself
  still runs; it is bracketed by `__rsan_asm_begin` / `__rsan_asm_end` (runtime/src/
  atomic_asm.c), which hold the location lock across it and apply the clock rules of what
  it really did (a cmpxchg that left memory unchanged counts as the failed CAS, a load);
- `mfence`, `dmb ish|sy`, and a `lock`-prefixed RMW on the stack (`lock; addl $0,(%rsp)`):
  a seq_cst fence; `lfence`, `dmb ishld`: acquire; `sfence`, `dmb ishst`: release;
- an empty template (`asm volatile("" ::: "memory")`, a compiler barrier) is
  atomic_signal_fence: nothing to model; asm that touches no memory (`pause`, `rdtsc`) too;
- anything else that has a memory operand or a "memory" clobber, and any of the above the
  rules cannot pin down (two atomic instructions, a branch or label in the template, an
  operand that cannot be resolved), is left as it is (a compiler barrier) and named in one
  warning per site: never silently.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pyrsan.abi import primary_frame

from .model import IRModule
from .sites import SiteTable
from .syntax import i64_literal, unescape_string

# `%1 = tail call i32 asm sideeffect "lock; cmpxchgl $2, $1", "={ax},=*m,r,0,*m,~{memory}"(ptr
#  nonnull elementtype(i32) @x, i32 1, i32 0, ptr nonnull elementtype(i32) @x) #1, !srcloc !9`
ASM_RE = re.compile(
    r'\b(call|callbr)\b.*?\basm\b((?:\s+(?:sideeffect|alignstack|inteldialect|unwind))*)\s+'
    r'"((?:[^"\\]|\\[0-9A-Fa-f]{2}|\\\\)*)",\s*"((?:[^"\\]|\\[0-9A-Fa-f]{2}|\\\\)*)"\(')

_FENCES = {"mfence": 5, "lfence": 2, "sfence": 3}
_DMB = {"ish": 5, "sy": 5, "osh": 5, "ishld": 2, "ld": 2, "oshld": 2, "ishst": 3, "st": 3, "oshst": 3}
# mnemonic stem (AT&T suffix stripped) -> RMW op of abi.RMW_OP_NUMBER
_RMW_STEMS = {
    "xchg": "xchg", "xadd": "add", "add": "add", "sub": "sub", "inc": "add", "dec": "sub",
    "and": "and", "or": "or", "xor": "xor", "bts": "or", "btr": "and", "btc": "xor",
    "neg": "xchg", "not": "xor", "adc": "add", "sbb": "sub",
}
_SUFFIX_SIZE = {"b": 1, "w": 2, "l": 4, "q": 8}
# instructions known to touch no memory: with a "memory" clobber they are compiler barriers
_NO_MEMORY = {"pause", "nop", "yield", "isb", "rdtsc", "rdtscp", "cpuid", "wfe", "sev", "hint"}
_MOVES = {"mov", "movb", "movw", "movl", "movq"}
_BRANCH_RE = re.compile(r"^(?:j[a-z]+|loop\w*|call|ret|b\.?\w*|cbn?z|tbn?z)\b|:\s*$|^\d+:")
# AArch64 load-/store-exclusive: LL/SC loops need the whole loop, not one instruction
_EXCLUSIVE_RE = re.compile(r"^(?:ld[a]?xr|st[l]?xr|ld[a]?xp|st[l]?xp|cas|swp|ldadd|ldclr|ldset|ldeor)\w*\b")


@dataclass(frozen=True)
class AsmNote:
    """What the pass did with one asm statement (listed by -v; `warn` ones always counted)."""
    file: str
    line: int
    template: str
    action: str        # "rmw", "cas", "fence", "barrier", "none", "warning"
    detail: str
    warn: bool

    def describe(self) -> str:
        where = "%s:%d" % (self.file.rsplit("/", 1)[-1] or "?", self.line) if self.file else "?"
        text = self.template.replace("\n", "; ").replace("\t", " ").strip()
        if len(text) > 60:
            text = text[:57] + "..."
        if self.warn:
            return "inline asm at %s (\"%s\") is not modelled: %s; treated as a compiler barrier" % (
                where, text, self.detail)
        return "inline asm at %s (\"%s\") modelled as %s" % (where, text, self.detail)


def _constraints(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def _operands(constraints: list[str]) -> list[tuple[str, int | None]]:
    """Per asm operand `$k` (clobbers excluded): (constraint, index of its call argument or
    None for a direct output)."""
    out: list[tuple[str, int | None]] = []
    arg = 0
    for c in constraints:
        if c.startswith("~"):
            continue
        if c.startswith("=") and not c.startswith("=*") and not c.startswith("=&*"):
            out.append((c, None))
        else:
            out.append((c, arg))
            arg += 1
    return out


def _call_args(text: str, start: int) -> list[str]:
    """The top-level arguments of the call whose `(` is at text[start]."""
    depth = 0
    args = []
    cur = start + 1
    in_str = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
            if depth == 0:
                args.append(text[cur:i].strip())
                break
        elif ch == "," and depth == 1:
            args.append(text[cur:i].strip())
            cur = i + 1
    return [a for a in args if a]


_ATTR_RE = re.compile(r"\b(?:elementtype|dereferenceable|dereferenceable_or_null|align|captures)"
                      r"\s*\((?:[^()]|\([^()]*\))*\)|\balign\s+\d+\b")
_ATTR_WORDS = {"nonnull", "noundef", "readonly", "writeonly", "nocapture", "noalias", "inreg", "immarg"}


def _pointer_arg(arg: str) -> tuple[str | None, int | None]:
    """`ptr nonnull elementtype(i32) @x` -> (`ptr @x`, 4); (None, None) if not a pointer."""
    if not arg.startswith("ptr ") or arg.startswith("ptr addrspace("):
        return None, None
    m = re.search(r"elementtype\((i\d+|ptr|float|double)\)", arg)
    size = None
    if m:
        ty = m.group(1)
        size = 8 if ty in ("ptr", "double") else 4 if ty == "float" else int(ty[1:]) // 8
    rest = _ATTR_RE.sub(" ", arg[4:])
    words = rest.split()
    while words and words[0] in _ATTR_WORDS:
        words.pop(0)
    if not words:
        return None, None
    return "ptr " + " ".join(words), size


def _instructions(template: str) -> list[str]:
    """The template's instructions, lower-cased, comments dropped; a `lock` prefix written as
    its own statement (`lock; cmpxchg`) is joined to the next one."""
    parts = []
    for raw in re.split(r"[;\n]", template.replace("$$", "\x00")):
        s = raw.split("#", 1)[0].split("//", 1)[0].strip().lower()
        if s:
            parts.append(s)
    out: list[str] = []
    pending = ""
    for s in parts:
        if s in ("lock", "rep", "repe", "repz", "repne", "repnz"):
            pending += s + " "
            continue
        out.append(pending + s)
        pending = ""
    if pending:
        out.append(pending.strip())
    return out


_OPERAND_REF_RE = re.compile(r"\$(\d+)|\$\{(\d+)(?::\w+)?\}")


def _memory_operand(ins_ops: str, operands: list[tuple[str, int | None]]):
    """The memory operand of an instruction's operand text: ("stack", None) for (%rsp)/(%esp),
    ("arg", k) for an asm operand k that is a memory constraint or a register in parentheses,
    None when the instruction names no memory."""
    if re.search(r"\(\s*%%?[re]?sp\s*\)", ins_ops):
        return ("stack", None)
    for m in re.finditer(r"\(([^()]*)\)", ins_ops):
        ref = _OPERAND_REF_RE.search(m.group(1))
        if ref:
            return ("arg", int(ref.group(1) or ref.group(2)))
        return ("unknown", None)
    for ref in _OPERAND_REF_RE.finditer(ins_ops):
        k = int(ref.group(1) or ref.group(2))
        if k < len(operands) and "*m" in operands[k][0].replace("&", ""):
            return ("arg", k)
    if re.search(r"\[[^\]]*\]", ins_ops):  # AArch64 / Intel syntax memory operand
        return ("unknown", None)
    return None


@dataclass
class _Plan:
    action: str                # rmw, cas, load, store, fence, none, barrier, warning
    detail: str = ""
    order: int = 5
    op: str = ""
    size: int = 8
    ptr: str = ""


def _plan(template: str, constraints: list[str], args: list[str]) -> _Plan:
    operands = _operands(constraints)
    clobbers_memory = "~{memory}" in constraints
    has_memory_operand = any("*m" in c for c, _ in operands)
    instrs = _instructions(template)
    if not instrs:
        return _Plan("barrier" if clobbers_memory else "none", "a compiler barrier")
    fences: list[int] = []
    atomics: list[_Plan] = []
    touches = False
    quiet = True               # every instruction is known to touch no memory
    problem = ""
    for ins in instrs:
        quiet = quiet and ins.split(" ", 1)[0] in _NO_MEMORY
        if _BRANCH_RE.search(ins):
            problem = "a branch or label in the template"
            continue
        locked = ins.startswith("lock ")
        body = ins[5:].strip() if locked else ins
        mnem, _, ops = body.partition(" ")
        if mnem in _FENCES:
            fences.append(_FENCES[mnem])
            continue
        if mnem in ("dmb", "dsb"):
            fences.append(_DMB.get(ops.strip().split(",")[0].strip() or "sy", 5))
            continue
        if _EXCLUSIVE_RE.match(body):
            problem = "an AArch64 exclusive or LSE atomic (%s)" % mnem
            touches = True
            continue
        mem = _memory_operand(ops, operands)
        if mem is None:
            continue
        touches = True
        stem, size = mnem, None
        if mnem.startswith("cmpxchg"):
            stem = "cmpxchg"
            size = {"cmpxchg8b": 8, "cmpxchg16b": 16}.get(mnem)
            if size is None and len(mnem) == 8:
                size = _SUFFIX_SIZE.get(mnem[-1])
        elif mnem not in _RMW_STEMS and mnem[:-1] in _RMW_STEMS and mnem[-1] in _SUFFIX_SIZE:
            stem, size = mnem[:-1], _SUFFIX_SIZE[mnem[-1]]
        move = mnem in _MOVES and len(instrs) == 1 and not locked
        atomic = stem == "cmpxchg" or stem == "xchg" or (locked and stem in _RMW_STEMS) or move
        if not atomic:
            continue
        if mem[0] == "stack":
            fences.append(5)  # `lock; addl $0,(%rsp)`: the classic full barrier
            continue
        if mem[0] != "arg" or mem[1] is None or mem[1] >= len(operands) or operands[mem[1]][1] is None:
            problem = "its memory operand cannot be resolved"
            continue
        ptr, elem = _pointer_arg(args[operands[mem[1]][1]]) if operands[mem[1]][1] < len(args) else (None, None)
        if ptr is None:
            problem = "its memory operand cannot be resolved"
            continue
        size = size or elem or 8
        if size not in (1, 2, 4, 8, 16):
            problem = "a %d-byte atomic operand" % size
            continue
        if move:
            # x86 (TSO): a plain mov to memory is a release store, from memory an acquire
            # load (the C11 mapping read backwards); AT&T puts the destination last
            size = _SUFFIX_SIZE[mnem[-1]] if mnem != "mov" else (elem or 8)
            parts = [p.strip() for p in re.split(r",(?![^()]*\))", ops)]
            store = _memory_operand(parts[-1], operands) is not None
            if store:
                atomics.append(_Plan("store", "atomic store release (%d bytes)" % size, 3, "", size, ptr))
            else:
                atomics.append(_Plan("load", "atomic load acquire (%d bytes)" % size, 2, "", size, ptr))
        elif stem == "cmpxchg":
            atomics.append(_Plan("cas", "compare_exchange_strong seq_cst (%d bytes)" % size, 5, "", size, ptr))
        else:
            op = _RMW_STEMS[stem]
            atomics.append(_Plan("rmw", "atomic %s seq_cst (%d bytes)" % (mnem, size), 5, op, size, ptr))
    if problem or len(atomics) > 1:
        return _Plan("warning", problem or "more than one atomic instruction")
    if atomics:
        return atomics[0]
    if fences:
        order = 5 if 5 in fences or (2 in fences and 3 in fences) else max(fences)
        names = {2: "acquire", 3: "release", 5: "seq_cst"}
        return _Plan("fence", "atomic_thread_fence(memory_order_%s)" % names[order], order)
    if touches or has_memory_operand:
        return _Plan("warning", "it accesses memory")
    if clobbers_memory and quiet:
        return _Plan("barrier", "a compiler barrier")
    if clobbers_memory:
        return _Plan("warning", "it has a \"memory\" clobber")
    return _Plan("none", "no memory access")


# `  %6 = tail call i32 asm sideeffect "movl $1, $0", ...`: the result and its type
_ASM_RESULT_RE = re.compile(r'^  (%[-\w.$]+|%"[^"]*") = (?:tail |notail )?call (i8|i16|i32|i64) asm ')


def asm_load(text: str) -> tuple[str, str, int] | None:
    """(result, pointer operand `ptr @x`, size) of an asm statement modelled as an atomic load
    (one x86 `mov` from memory into its integer result of the same width, an acquire load),
    else None. spinloops.py recognises wait loops made of them (Concurrency Kit's
    `ck_pr_load_*` in its default, inline-asm mode)."""
    m = ASM_RE.search(text)
    r = _ASM_RESULT_RE.match(text)
    if not m or not r or m.group(1) != "call":
        return None
    plan = _plan(unescape_string(m.group(3)), _constraints(unescape_string(m.group(4))),
                 _call_args(text, m.end() - 1))
    if plan.action != "load" or int(r.group(2)[1:]) != 8 * plan.size:
        return None
    return r.group(1), plan.ptr, plan.size


# a line rewrite_atomics puts before the asm load of a recognised spin loop: `; pyrsan.spin asm K`
# (K: its LoopMatch in module.asm_spins); rewrite_asm makes that load the spin load, numbered
# with the other asm sites (so the program's atomic sites keep their numbers: repairs.py)
SPIN_ASM_PLACEHOLDER = "  ; pyrsan.spin asm %d"
_SPIN_ASM_RE = re.compile(r"^  ; pyrsan\.spin asm (\d+)$")

def _spin_placeholder(lines: list[str], index: int) -> int | None:
    """The line of the spin placeholder put before the asm statement at index, across what
    the passes in between insert before an instruction (an await loop's head call)."""
    i = index - 1
    while i >= 0 and (lines[i].startswith(("  ;", "    #dbg_")) or "@__rsan_await_head(" in lines[i]):
        if _SPIN_ASM_RE.match(lines[i]):
            return i
        i -= 1
    return None


# op numbers the runtime's asm hooks take besides RMW ops (runtime/src/atomic_asm.c)
ASM_CAS_OP = -1
ASM_LOAD_OP = -2
ASM_STORE_OP = -3


def asm_plan(text: str) -> tuple[str, _Plan] | None:
    """The template of the inline asm called on this instruction line and what it is modelled
    as (its action, and for an atomic its `ptr` operand); None when the line calls no asm."""
    m = ASM_RE.search(text)
    if not m:
        return None
    template = unescape_string(m.group(3))
    if m.group(1) != "call":
        return template, _Plan("warning", "asm goto")
    return template, _plan(template, _constraints(unescape_string(m.group(4))), _call_args(text, m.end() - 1))


def rewrite_asm(module: IRModule, table: SiteTable) -> list[AsmNote]:
    from pyrsan.abi import RMW_OP_NUMBER

    notes: list[AsmNote] = []
    for fn in module.functions():
        edits: dict[int, list[str]] = {}
        for line in fn.scan((" asm ",)):
            found = asm_plan(line.text)
            if found is None:
                continue
            template, plan = found
            frame = primary_frame(table.frames_at(fn, line))
            file, lineno = (frame.file, frame.line) if frame else ("", 0)
            if plan.action in ("none", "barrier"):
                continue
            at = _spin_placeholder(fn.lines, line.index)
            spin = _SPIN_ASM_RE.match(fn.lines[at]) if at is not None else None
            if spin and at is not None and plan.action == "load":
                from .atomics import _Rewriter     # (atomics imports spinloops, which imports this)
                loop = module.asm_spins[int(spin.group(1))]
                notes.append(AsmNote(file, lineno, template, "load", "a spin loop's " + plan.detail, False))
                sid = table.add(fn, line, "load", plan.order, plan.size)
                rw = _Rewriter(module, table, fn, line)
                rw.spin_call(plan.ptr, "i%d" % (8 * plan.size), plan.size, plan.order, sid, loop)
                edits[at] = []
                edits[line.index] = rw.out
                continue
            notes.append(AsmNote(file, lineno, template, plan.action, plan.detail,
                                 plan.action == "warning"))
            dbg = ", !dbg %s" % line.dbg if line.dbg else ""
            if plan.action == "fence":
                sid = table.add(fn, line, "fence", plan.order, 0)
                module.used.add("__rsan_fence")
                edits[line.index] = ["  notail call void @__rsan_fence(i32 %d, i32 0, i64 %s)%s" % (
                    plan.order, i64_literal(sid), dbg), line.text]
            elif plan.action in ("rmw", "cas", "load", "store"):
                if plan.action == "cas":
                    sid = table.add(fn, line, "cas", 5, plan.size, order_fail=5)
                    op = ASM_CAS_OP
                elif plan.action in ("load", "store"):
                    sid = table.add(fn, line, plan.action, plan.order, plan.size)
                    op = ASM_LOAD_OP if plan.action == "load" else ASM_STORE_OP
                else:
                    sid = table.add(fn, line, "rmw", 5, plan.size, op=plan.op)
                    op = RMW_OP_NUMBER[plan.op]
                module.used.update(("__rsan_asm_begin", "__rsan_asm_end"))
                edits[line.index] = [
                    "  notail call void @__rsan_asm_begin(%s, i32 %d, i32 %d, i64 %s)%s" % (
                        plan.ptr, plan.size, op, i64_literal(sid), dbg),
                    line.text,
                    "  notail call void @__rsan_asm_end()%s" % dbg]
        fn.apply(edits)
    return notes

"""Transcription of a litmus program (testsuite/litmus/*.c) into the op tuples of the
reference model (testsuite/reference/rc20.py), so that the model's verdict can be compared
with the program's `// robust:` header (test_litmus_model.py).

Straight-line programs are transcribed automatically from their source: each thread function
`static void *tN(void *arg)` is read statement by statement, and the threads are those `main`
starts, in the order it starts them. Recognised statements (one per line):

    atomic_store_explicit(&x, 1, memory_order_release);        ("st", "x", 1, "rel")
    atomic_store(&x, 1);   r = atomic_load(&x);                 seq_cst
    r0 = atomic_load_explicit(&y, memory_order_acquire);        ("ld", "y", "acq")
    r0 = atomic_fetch_add_explicit(&y, 1, memory_order_relaxed);   ("rmw", "y", "add", 1, "rlx")
    atomic_exchange_explicit / fetch_sub / fetch_and / fetch_or / fetch_xor
    atomic_thread_fence(memory_order_seq_cst);                  ("fence", "sc")
    { int e = 1; r0 = atomic_compare_exchange_strong_explicit(&y, &e, 2, S, F); }
    pyrsan_wait_explicit(&x, 0, memory_order_acquire);   pyrsan_wait(&x, 0);
    pyrsan_bcas_explicit(&l, 0, 1, memory_order_acquire);   pyrsan_bcas(&l, 0, 1);
    while (atomic_load_explicit(&y, memory_order_relaxed) != 1)      (the `;` on the next line)
                                                                ("wait", "y", 1, "rlx")
    while (!atomic_load_explicit(&y, memory_order_relaxed))     ("waitne", "y", 0, "rlx")

The two loops are what passes/spinloops.py recognises (a failed iteration changes nothing).
`(void)arg;`, `return NULL;`, blank lines and comments are skipped; anything else makes the
program untranscribable automatically.

Other programs (loops, arrays, threads started in a loop) carry a hand transcription at the
end of the file, after the code:

    // model: T1: st(x, 1, rlx); ld(y, rlx)
    // model: T2: ...
    // model-prefix: T1: ...       a prefix of every run of each thread: since every graph of
                                   a prefix is a graph of the program, a non-robust prefix
                                   confirms `robust: no` (and says nothing about `yes`)
    // model-none: <reason>        no faithful transcription exists (the test skips it)

with ops st(x, v, o) ld(x, o) rmw(x, op, v, o) cas(x, e, d, s, f, weak|strong) fence(o)
wait(x, v, o) waitne(x, v, o) bcas(x, e, d, o).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ORDERS = {"relaxed": "rlx", "consume": "con", "acquire": "acq", "release": "rel",
          "acq_rel": "ar", "seq_cst": "sc"}
RMW_NAMES = {"exchange": "xchg", "fetch_add": "add", "fetch_sub": "sub", "fetch_and": "and",
             "fetch_or": "or", "fetch_xor": "xor"}

_NUM = r"(-?\d+)"
_VAR = r"&(\w+)"
_ORDER = r"memory_order_(\w+)"
_RESULT = r"(?:\w+ = )?"
# statement patterns -> op builders
_STATEMENTS = [
    (re.compile(rf"^atomic_store_explicit\({_VAR}, {_NUM}, {_ORDER}\);$"),
     lambda m: ("st", m[1], int(m[2]), ORDERS[m[3]])),
    (re.compile(rf"^atomic_store\({_VAR}, {_NUM}\);$"), lambda m: ("st", m[1], int(m[2]), "sc")),
    (re.compile(rf"^{_RESULT}atomic_load_explicit\({_VAR}, {_ORDER}\);$"),
     lambda m: ("ld", m[1], ORDERS[m[2]])),
    (re.compile(rf"^{_RESULT}atomic_load\({_VAR}\);$"), lambda m: ("ld", m[1], "sc")),
    (re.compile(rf"^{_RESULT}atomic_(exchange|fetch_add|fetch_sub|fetch_and|fetch_or|fetch_xor)"
                rf"_explicit\({_VAR}, {_NUM}, {_ORDER}\);$"),
     lambda m: ("rmw", m[2], RMW_NAMES[m[1]], int(m[3]), ORDERS[m[4]])),
    (re.compile(rf"^atomic_thread_fence\({_ORDER}\);$"), lambda m: ("fence", ORDERS[m[1]])),
    (re.compile(rf"^\{{ int (\w+) = {_NUM}; {_RESULT}atomic_compare_exchange_(strong|weak)_explicit"
                rf"\({_VAR}, &(\w+), {_NUM}, {_ORDER}, {_ORDER}\); \}}$"),
     lambda m: ("cas", m[4], int(m[2]), int(m[6]), ORDERS[m[7]], ORDERS[m[8]], m[3] == "weak")
     if m[1] == m[5] else None),
    (re.compile(rf"^pyrsan_wait_explicit\({_VAR}, {_NUM}, {_ORDER}\);$"),
     lambda m: ("wait", m[1], int(m[2]), ORDERS[m[3]])),
    (re.compile(rf"^pyrsan_wait\({_VAR}, {_NUM}\);$"), lambda m: ("wait", m[1], int(m[2]), "sc")),
    (re.compile(rf"^pyrsan_bcas_explicit\({_VAR}, {_NUM}, {_NUM}, {_ORDER}\);$"),
     lambda m: ("bcas", m[1], int(m[2]), int(m[3]), ORDERS[m[4]])),
    (re.compile(rf"^pyrsan_bcas\({_VAR}, {_NUM}, {_NUM}\);$"),
     lambda m: ("bcas", m[1], int(m[2]), int(m[3]), "sc")),
    (re.compile(rf"^while \(atomic_load_explicit\({_VAR}, {_ORDER}\) != {_NUM}\)$"),
     lambda m: ("wait", m[1], int(m[3]), ORDERS[m[2]])),
    (re.compile(rf"^while \(!atomic_load_explicit\({_VAR}, {_ORDER}\)\)$"),
     lambda m: ("waitne", m[1], 0, ORDERS[m[2]])),
]
# no memory operation of the model (nanosleep only nudges the OS scheduler)
_SKIP = re.compile(r"^(?:\(void\)arg;|return NULL;|;|nanosleep\(.*\);|)$")
_THREAD_FN = re.compile(r"^static void \*(\w+)\(void \*arg\) \{$")
# `void *(*fn[2])(void *) = {t1, t2};`   `pthread_create(&th[i], NULL, fn[i], NULL);`
_FN_TABLE = re.compile(r"void \*\(\*\w+\[\d+\]\)\(void \*\) = \{([\w, ]+)\};")
_CREATE = re.compile(r"pthread_create\([^,]+, [^,]+, (\w+),")


class Untranscribable(ValueError):
    """The program is not straight-line code the automatic transcription understands."""


@dataclass(frozen=True)
class Transcription:
    threads: list
    sc: str            # sc_accesses mode: "fenced" or "ra"
    prefix: bool       # a prefix of each thread's runs (confirms only `robust: no`)
    how: str           # "source" or "hand"


def _strip_comment(line: str) -> str:
    return re.sub(r"//.*$|/\*.*?\*/", "", line).strip()


def _thread_bodies(lines: list[str]) -> dict[str, list[str]]:
    bodies: dict[str, list[str]] = {}
    current = None
    for line in lines:
        m = _THREAD_FN.match(line)
        if m:
            current = m.group(1)
            bodies[current] = []
            continue
        if current is not None:
            if line.startswith("}"):
                current = None
            else:
                bodies[current].append(line)
    return bodies


def _started_threads(text: str, bodies: dict[str, list[str]]) -> list[str]:
    table = _FN_TABLE.search(text)
    if table:
        return [name.strip() for name in table.group(1).split(",")]
    names = _CREATE.findall(text)
    if "for (" in text[text.find("int main"):] and names:
        raise Untranscribable("threads started in a loop")
    return names


def _ops(name: str, body: list[str]) -> list:
    ops = []
    for raw in body:
        line = _strip_comment(raw)
        if _SKIP.match(line):
            continue
        for pattern, build in _STATEMENTS:
            m = pattern.match(line)
            if m:
                op = build(m)
                if op is None:
                    break
                ops.append(op)
                break
        else:
            raise Untranscribable(f"{name}: statement {line!r}")
    return ops


def _hand(lines: list[str]) -> tuple[str, list] | None:
    """The `// model...:` block: (kind, threads) with kind model / model-prefix / model-none."""
    kind, threads = None, []
    for line in lines:
        m = re.match(r"^// (model|model-prefix|model-none): (.*)$", line)
        if not m:
            continue
        if kind not in (None, m.group(1)):
            raise ValueError("mixed // model: kinds")
        kind = m.group(1)
        if kind == "model-none":
            return kind, [m.group(2)]
        t = re.match(r"^T\d+: (.*)$", m.group(2))
        if not t:
            raise ValueError(f"bad model line {line!r}")
        threads.append([_parse_op(op) for op in t.group(1).split(";") if op.strip()])
    return (kind, threads) if kind else None


def _parse_op(text: str):
    m = re.match(r"^\s*(\w+)\((.*)\)\s*$", text)
    if not m:
        raise ValueError(f"bad model op {text!r}")
    name, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
    conv = [int(a) if re.fullmatch(r"-?\d+", a) else a for a in args]
    if name == "cas":
        if conv[5] not in ("weak", "strong"):
            raise ValueError(f"cas needs weak or strong: {text!r}")
        conv[5] = conv[5] == "weak"
    arity = {"st": 3, "ld": 2, "rmw": 4, "cas": 6, "fence": 1, "wait": 3, "waitne": 3, "bcas": 4}
    if arity.get(name) != len(conv):
        raise ValueError(f"bad model op {text!r}")
    return (name, *conv)


def transcribe(path: Path, options: tuple[str, ...] = ()) -> Transcription:
    """The program's threads as model ops; Untranscribable (or a `model-none` reason)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    sc = options[options.index("--sc-accesses") + 1] if "--sc-accesses" in options else "fenced"
    hand = _hand(lines)
    if hand is not None:
        kind, threads = hand
        if kind == "model-none":
            raise Untranscribable("model-none: " + threads[0])
        return Transcription(threads, sc, kind == "model-prefix", "hand")
    bodies = _thread_bodies(lines)
    names = _started_threads(text, bodies)
    if not names or any(n not in bodies for n in names):
        raise Untranscribable("threads not found")
    return Transcription([_ops(n, bodies[n]) for n in names], sc, False, "source")

"""An independent reference model of execution-graph robustness against RC20.

It never uses location clocks. For a tiny straight-line program it enumerates candidate
execution graphs (events, rf, mo), keeps the RC20-consistent ones and asks whether each is
SC-consistent. The program is robust iff every RC20-consistent execution graph is
SC-consistent (RSAN paper §2.2). Candidate graphs are those of *prefixes* of runs of the
program (RSAN paper §2.1, "each graph corresponds to a prefix of a run of P"), so prefix
graphs are included.

Programs use the op tuples of testsuite/runtime/harness.py:
  ("ld", x, order)  ("st", x, value, order)  ("rmw", x, op, value, order)
  ("cas", x, expected, desired, succ, fail, weak)  ("fence", order)
  ("wait", x, value, order)  ("bcas", x, expected, desired, order)
with orders "rlx", "con", "acq", "rel", "ar" (acq_rel), "sc"; RMW ops xchg/add/sub/and/or/xor.

Definitions (RSAN paper §2, §4.1, §4.2; RC20 of Margalit & Lahav POPL'21; LM19 §3):
  events      R (read), W (write), U (RMW: a read and a write), F (fence); one initial
              write of 0 per location, po-before every other event.
  fr          (rf^-1 ; mo) minus identity                             (RSAN paper fn. 4)
  rs          [W] ; (rf ; [U])*       release sequences through RMWs only (C++20, algorithm.md §6.7)
  sw          [E^⊒rel] ; ([F] ; po)? ; rs ; rf ; (po ; [F])? ; [E^⊒acq]
  hb          (po ∪ sw)+
  eco         (rf ∪ mo ∪ fr)+
  RC20-consistent:  hb ; eco? irreflexive (coherence), fr ; mo irreflexive (atomicity,
              §4.1), mo ; rf irreflexive, po ∪ rf acyclic (§4.2)
              (mo ; rf irreflexive: an RMW reads a write mo-before it, C11 [atomics.order]
              "the last value in the modification order before the write of the RMW". With
              single-event RMWs neither hb;eco? nor fr;mo forbids w rf U, U mo w when the rf
              edge does not synchronise; §4.1's reading of ATOMICITY, "the immediate
              mo-predecessor", presupposes it. The fast enumerator places an RMW right
              after the write it reads.)
  SC-consistent:    hb_SC = (po ∪ rf ∪ mo ∪ fr)+ irreflexive (Definition 2.1)
Project decisions (architecture.md, algorithm.md §3.3, §6):
  SC fence           F(acq) ; U(F, acq_rel) ; F(rel) on a dedicated location F
  seq_cst access     sc="fenced": SC fence ; access(acq / rel / acq_rel) ; SC fence
                     sc="ra":     access(acq / rel / acq_rel)
                     (a CAS is fenced when its success or failure order is seq_cst)
  consume            = acquire
  CAS                success: U with the success order, reads the expected value;
                     failure: R with the failure order (seq_cst/acq_rel -> acq, release -> rlx);
                     a weak CAS may fail whatever value it reads, a strong one only on a
                     different value.
  wait(x != v)       ("waitne", x, v, order): a spin loop that leaves on any value but v
                     (passes/spinloops.py): one R that reads only writes of other values
  wait(x = v)        RSAN paper §4.3: blocks until it reads v; failed attempts create no
                     events, so it is one R (acq if order ⊒ acq) that reads only writes of v
                     (a thread blocked on it has no further events: prefix graphs)
  BCAS(x, e -> d)    one U (order) that reads only writes of e and writes d
                     (seq_cst: fenced / RA as the other accesses)
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

ACQ = frozenset({"con", "acq", "ar", "sc"})
REL = frozenset({"rel", "ar", "sc"})
FLOC = "__F"  # the dedicated location of SC fences
MASK = 0xFFFFFFFF


def apply_rmw(op: str, old: int, v: int) -> int:
    if op in ("xchg", "bcas"):
        return v & MASK
    if op == "add":
        return (old + v) & MASK
    if op == "sub":
        return (old - v) & MASK
    if op == "and":
        return old & v
    if op == "or":
        return old | v
    if op == "xor":
        return old ^ v
    raise ValueError(f"unsupported rmw op {op!r}")


@dataclass(frozen=True)
class Tmpl:
    """A potential event of a thread (before values and CAS outcomes are known).
    kind: "R", "W", "U", "F" or "C" (a CAS, which becomes U on success, R on failure)."""
    kind: str
    loc: str | None
    acq: bool = False
    rel: bool = False
    value: int = 0            # W: the value stored; U: the operand
    op: str = "xchg"          # U: the RMW operation
    expected: int = 0         # C
    desired: int = 0          # C
    weak: bool = True         # C
    facq: bool = False        # C: acquire on failure
    src: int = -1             # index of the program op this event comes from (-1: none)
    need: int | None = None   # wait / BCAS: the only value the event may read
    avoid: int | None = None  # wait(x != v): the one value the event may not read


def _sc_fence(src: int) -> list[Tmpl]:
    return [Tmpl("F", None, acq=True, src=src),
            Tmpl("U", FLOC, acq=True, rel=True, value=0, op="add", src=src),
            Tmpl("F", None, rel=True, src=src)]


def expand_thread(ops, sc: str = "fenced") -> list[Tmpl]:
    """Lowers one thread's ops to event templates (the project decisions above)."""
    if sc not in ("fenced", "ra"):
        raise ValueError(f"sc must be 'fenced' or 'ra', not {sc!r}")
    out: list[Tmpl] = []
    for i, op in enumerate(ops):
        kind = op[0]
        if kind == "fence":
            o = op[1]
            if o == "sc":
                out += _sc_fence(i)
            elif o in ("acq", "con", "rel", "ar"):
                out.append(Tmpl("F", None, acq=o in ACQ, rel=o in REL, src=i))
            continue  # a relaxed fence does nothing
        if kind == "cas":
            _, x, e, d, s, f, weak = op
            fenced = sc == "fenced" and "sc" in (s, f)
            ms = "ar" if s == "sc" else s
            mf = "acq" if f in ("sc", "ar") else ("rlx" if f == "rel" else f)
            ev = [Tmpl("C", x, acq=ms in ACQ, rel=ms in REL, expected=e, desired=d,
                       weak=bool(weak), facq=mf in ACQ, src=i)]
        else:
            order = op[-1]
            fenced = sc == "fenced" and order == "sc"
            if kind == "ld":
                ev = [Tmpl("R", op[1], acq=order in ACQ, src=i)]
            elif kind == "st":
                ev = [Tmpl("W", op[1], rel=order in REL, value=op[2], src=i)]
            elif kind == "rmw":
                ev = [Tmpl("U", op[1], acq=order in ACQ, rel=order in REL, value=op[3],
                           op=op[2], src=i)]
            elif kind == "wait":
                ev = [Tmpl("R", op[1], acq=order in ACQ, need=op[2], src=i)]
            elif kind == "waitne":
                ev = [Tmpl("R", op[1], acq=order in ACQ, avoid=op[2], src=i)]
            elif kind == "bcas":
                ev = [Tmpl("U", op[1], acq=order in ACQ, rel=order in REL, value=op[3],
                           op="bcas", need=op[2], src=i)]
            else:
                raise ValueError(f"unknown op {op!r}")
        out += (_sc_fence(i) if fenced else []) + ev + (_sc_fence(i) if fenced else [])
    return out


class Layout:
    """Fixed (canonical) indices for every potential event: initial writes first, then the
    threads' events in order. A graph uses a subset; bit sets are ints over these indices."""

    def __init__(self, threads, sc: str = "fenced"):
        self.tmpl_threads = [expand_thread(t, sc) for t in threads]
        locs = sorted({t.loc for th in self.tmpl_threads for t in th if t.loc is not None})
        self.locs = locs
        self.init = {x: i for i, x in enumerate(locs)}
        self.ninit = len(locs)
        self.base = []
        n = self.ninit
        for th in self.tmpl_threads:
            self.base.append(n)
            n += len(th)
        self.n = n
        self.tid = [-1] * self.ninit
        self.tmpl: list[Tmpl | None] = [None] * self.ninit
        for k, th in enumerate(self.tmpl_threads):
            for t in th:
                self.tid.append(k)
                self.tmpl.append(t)
        self.init_mask = (1 << self.ninit) - 1

    def index(self, k: int, i: int) -> int:
        return self.base[k] + i


# --------------------------------------------------------------------------------------
# Graphs and the consistency predicates, straight from the definitions (used by the
# brute-force enumerator and by the tests; the fast enumerator below must agree with them).
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Event:
    id: int
    tid: int          # -1 for initial writes
    kind: str         # "R", "W", "U", "F"
    loc: str | None
    acq: bool
    rel: bool
    rval: int | None  # value read
    wval: int | None  # value written


@dataclass(frozen=True)
class Graph:
    events: tuple[Event, ...]
    po: frozenset      # pairs (a, b), transitive
    rf: frozenset      # pairs (w, r)
    mo: frozenset      # pairs (w1, w2), transitive, per location


def _closure(pairs, nodes):
    succ = {n: set() for n in nodes}
    for a, b in pairs:
        succ[a].add(b)
    changed = True
    while changed:
        changed = False
        for a in nodes:
            new = set()
            for b in succ[a]:
                new |= succ[b]
            if not new <= succ[a]:
                succ[a] |= new
                changed = True
    return {(a, b) for a in nodes for b in succ[a]}


def _compose(r1, r2):
    by = {}
    for a, b in r2:
        by.setdefault(a, set()).add(b)
    return {(a, c) for a, b in r1 for c in by.get(b, ())}


def derived(g: Graph):
    ev = {e.id: e for e in g.events}
    nodes = list(ev)
    is_w = {i for i, e in ev.items() if e.kind in ("W", "U")}
    is_r = {i for i, e in ev.items() if e.kind in ("R", "U")}
    fr = {(r, w2) for (w, r) in g.rf for (w1, w2) in g.mo if w1 == w and r != w2}
    # rs = [W] ; (rf ; [U])*
    rs = {(w, w) for w in is_w}
    frontier = set(rs)
    while frontier:
        step = {(a, c) for (a, b) in frontier for (w, c) in g.rf if w == b and ev[c].kind == "U"}
        frontier = step - rs
        rs |= frontier
    # sw = [E⊒rel] ; ([F] ; po)? ; rs ; rf ; (po ; [F])? ; [E⊒acq]
    rel_start = {(a, a) for a in is_w if ev[a].rel and ev[a].tid >= 0}
    rel_start |= {(f, w) for (f, w) in g.po if ev[f].kind == "F" and ev[f].rel and w in is_w}
    acq_end = {(r, r) for r in is_r if ev[r].acq}
    acq_end |= {(r, f) for (r, f) in g.po if ev[f].kind == "F" and ev[f].acq and r in is_r}
    sw = _compose(_compose(_compose(rel_start, rs), g.rf), acq_end)
    hb = _closure(set(g.po) | sw, nodes)
    eco = _closure(set(g.rf) | set(g.mo) | fr, nodes)
    return fr, sw, hb, eco


def rc20_consistent(g: Graph) -> bool:
    fr, _sw, hb, eco = derived(g)
    nodes = [e.id for e in g.events]
    if any((a, a) in hb for a in nodes):
        return False
    if _compose(hb, eco) & {(a, a) for a in nodes}:          # hb ; eco irreflexive
        return False
    if _compose(fr, g.mo) & {(a, a) for a in nodes}:         # atomicity
        return False
    if _compose(g.mo, g.rf) & {(a, a) for a in nodes}:       # an RMW reads an mo-earlier write
        return False
    porf = _closure(set(g.po) | set(g.rf), nodes)
    return not any((a, a) in porf for a in nodes)


def sc_consistent(g: Graph) -> bool:
    fr, _sw, _hb, _eco = derived(g)
    nodes = [e.id for e in g.events]
    hbsc = _closure(set(g.po) | set(g.rf) | set(g.mo) | fr, nodes)
    return not any((a, a) in hbsc for a in nodes)


def candidate_graphs(threads, sc: str = "fenced", prefixes: bool = True):
    """All candidate execution graphs (values consistent with the program, any rf and mo),
    of every prefix of the program when prefixes, else of complete runs only. Exponential:
    for tiny programs and tests only."""
    lay = Layout(threads, sc)
    lens = [len(t) for t in lay.tmpl_threads]
    ranges = [range(n + 1) for n in lens] if prefixes else [[n] for n in lens]
    for pre in itertools.product(*ranges):
        ids = [lay.index(k, i) for k in range(len(lens)) for i in range(pre[k])]
        cas_ids = [i for i in ids if lay.tmpl[i].kind == "C"]
        for outcome in itertools.product((True, False), repeat=len(cas_ids)):
            oc = dict(zip(cas_ids, outcome))
            kinds = {}
            for i in ids:
                t = lay.tmpl[i]
                kinds[i] = ("U" if oc[i] else "R") if t.kind == "C" else t.kind
            writes = {x: [lay.init[x]] for x in lay.locs}
            for i in ids:
                if kinds[i] in ("W", "U"):
                    writes[lay.tmpl[i].loc].append(i)
            reads = [i for i in ids if kinds[i] in ("R", "U")]
            for srcs in itertools.product(*[writes[lay.tmpl[r].loc] for r in reads]):
                rf = dict(zip(reads, srcs))
                if any(rf[r] == r for r in reads):
                    continue
                vals = _values(lay, ids, kinds, rf)
                if vals is None:
                    continue
                rval, wval = vals
                if not _cas_ok(lay, ids, kinds, rval) or not _need_ok(lay, ids, kinds, rval):
                    continue
                yield from _with_mo(lay, ids, kinds, rf, rval, wval, writes)


def _values(lay, ids, kinds, rf):
    """Values read and written, following rf (None on a po ∪ rf cycle through values)."""
    wval = {lay.init[x]: 0 for x in lay.locs}
    rval = {}
    pending = [i for i in ids]
    progress = True
    while pending and progress:
        progress = False
        rest = []
        for i in pending:
            k = kinds[i]
            t = lay.tmpl[i]
            if k in ("R", "U"):
                if rf[i] not in wval:
                    rest.append(i)
                    continue
                rval[i] = wval[rf[i]]
            if k == "W":
                wval[i] = t.value
            elif k == "U":
                wval[i] = t.desired if t.kind == "C" else apply_rmw(t.op, rval[i], t.value)
            progress = True
        pending = rest
    return None if pending else (rval, wval)


def _cas_ok(lay, ids, kinds, rval):
    for i in ids:
        t = lay.tmpl[i]
        if t.kind != "C":
            continue
        if kinds[i] == "U" and rval[i] != t.expected:
            return False
        if kinds[i] == "R" and not t.weak and rval[i] == t.expected:
            return False
    return True


def _need_ok(lay, ids, kinds, rval):
    """wait / BCAS events read only their value (failed attempts are no events)."""
    return all(_may_read(lay.tmpl[i], rval[i]) for i in ids if kinds[i] in ("R", "U"))


def _may_read(t: Tmpl, value: int) -> bool:
    """wait(x = v) / BCAS read only v; wait(x != v) reads anything but v."""
    return (t.need is None or value == t.need) and (t.avoid is None or value != t.avoid)


def _with_mo(lay, ids, kinds, rf, rval, wval, writes):
    evs = [Event(lay.init[x], -1, "W", x, False, False, None, 0) for x in lay.locs]
    for i in ids:
        t = lay.tmpl[i]
        k = kinds[i]
        acq = t.facq if (t.kind == "C" and k == "R") else t.acq
        rel = t.rel if k in ("W", "U") else False
        evs.append(Event(i, lay.tid[i], k, t.loc, acq, rel if k != "F" else t.rel,
                         rval.get(i), wval.get(i) if k in ("W", "U") else None))
    po = set()
    for i in ids:
        po |= {(lay.init[x], i) for x in lay.locs}
        po |= {(j, i) for j in ids if lay.tid[j] == lay.tid[i] and j < i}
    rfs = frozenset((w, r) for r, w in rf.items())
    per_loc = [itertools.permutations(writes[x][1:]) for x in lay.locs]
    for orders in itertools.product(*per_loc):
        mo = set()
        for x, order in zip(lay.locs, orders):
            seq = [lay.init[x], *order]
            mo |= {(seq[a], seq[b]) for a in range(len(seq)) for b in range(a + 1, len(seq))}
        yield Graph(tuple(evs), frozenset(po), rfs, frozenset(mo))


def robust_bruteforce(threads, sc: str = "fenced", prefixes: bool = True) -> bool:
    """Robustness straight from the definition, by brute force (tiny programs only)."""
    for g in candidate_graphs(threads, sc, prefixes):
        if rc20_consistent(g) and not sc_consistent(g):
            return False
    return True


# --------------------------------------------------------------------------------------
# The fast enumerator: the same definitions, maintained incrementally.
#
# Every RC20-consistent graph can be built by adding its events one at a time in a
# po ∪ rf topological order, and every intermediate graph is again a consistent candidate
# graph (all axioms are irreflexivity/acyclicity of relations that only shrink when a
# porf-maximal event is removed). So a search that adds one next event of some thread with
# every rf / mo / CAS-outcome choice, keeps the consistent results and deduplicates graphs
# visits exactly the RC20-consistent (prefix) graphs. po ∪ rf is acyclic by construction.
#
# A new event e has no outgoing po, rf or sw edge when added, so hb between old events is
# unchanged and hb_in[e] (events hb-before e) is computed once. Adding e does not change eco
# between old events either (the new paths through e are implied by old mo / fr edges), so a
# new coherence violation is exactly hb_in[e] ∩ eco_out[e] ≠ ∅. hb_SC between old events
# may grow (a po-before e, e mo-before b), so its closure is updated in full.
# --------------------------------------------------------------------------------------

@dataclass
class Result:
    robust: bool
    graphs: int                 # RC20-consistent graphs visited
    witness: dict | None = None  # a consistent, SC-inconsistent graph when not robust


class _State:
    __slots__ = ("lens", "kind", "rf", "mo", "rval", "wval", "hb_in", "eco_out", "sc_out",
                 "present")

    def copy(self):
        s = _State.__new__(_State)
        s.lens = list(self.lens)
        s.kind = dict(self.kind)
        s.rf = dict(self.rf)
        s.mo = {x: list(v) for x, v in self.mo.items()}
        s.rval = dict(self.rval)
        s.wval = dict(self.wval)
        s.hb_in = list(self.hb_in)
        s.eco_out = list(self.eco_out)
        s.sc_out = list(self.sc_out)
        s.present = self.present
        return s

    def key(self):
        return (tuple(self.lens), tuple(sorted(self.rf.items())),
                tuple(sorted((i, k) for i, k in self.kind.items() if k in ("R", "U"))),
                tuple(tuple(v) for _, v in sorted(self.mo.items())))


def _bits(m: int):
    while m:
        low = m & -m
        yield low.bit_length() - 1
        m ^= low


class Enumerator:
    def __init__(self, threads, sc: str = "fenced", limit: int = 2_000_000):
        self.threads = [list(t) for t in threads]
        self.lay = Layout(self.threads, sc)
        self.limit = limit

    def _initial(self) -> _State:
        lay = self.lay
        s = _State()
        s.lens = [0] * len(lay.tmpl_threads)
        s.kind, s.rf, s.rval = {}, {}, {}
        s.wval = {lay.init[x]: 0 for x in lay.locs}
        s.mo = {x: [lay.init[x]] for x in lay.locs}
        s.hb_in = [0] * lay.n
        s.eco_out = [0] * lay.n
        s.sc_out = [0] * lay.n
        for x in lay.locs:  # mo from each initial write to later writes only: none yet
            s.kind[lay.init[x]] = "W"
        s.present = lay.init_mask
        return s

    # -- helpers over a state --
    def _release_heads(self, s: _State, w: int) -> int:
        """Events a with a ; ([F];po)? ; rs ending at w, a ⊒ rel (the sw sources of reading w)."""
        lay = self.lay
        heads = 0
        c = w
        while True:
            if c >= lay.ninit:
                t = lay.tmpl[c]
                k = lay.tid[c]
                if t.rel:
                    heads |= 1 << c
                for j in range(lay.base[k], c):  # release fences po-before c
                    tj = lay.tmpl[j]
                    if tj.kind == "F" and tj.rel:
                        heads |= 1 << j
            if s.kind.get(c) == "U":
                c = s.rf[c]
                continue
            return heads

    def _hb_from(self, s: _State, preds: int) -> int:
        m = preds
        for p in _bits(preds):
            m |= s.hb_in[p]
        return m

    def successors(self, s: _State):
        """(thread, new state, new event) for every way to add one event."""
        lay = self.lay
        for k, th in enumerate(lay.tmpl_threads):
            i = s.lens[k]
            if i >= len(th):
                continue
            e = lay.index(k, i)
            t = th[i]
            if t.kind == "F":
                yield from self._add(s, k, e, "F", None, None)
            elif t.kind == "R":
                for w in s.mo[t.loc]:
                    if _may_read(t, s.wval[w]):
                        yield from self._add(s, k, e, "R", w, None)
            elif t.kind == "W":
                for pos in range(1, len(s.mo[t.loc]) + 1):
                    yield from self._add(s, k, e, "W", None, pos)
            elif t.kind == "U":
                for w in s.mo[t.loc]:
                    if t.need is None or s.wval[w] == t.need:
                        yield from self._add(s, k, e, "U", w, None)
            else:  # CAS
                for w in s.mo[t.loc]:
                    v = s.wval[w]
                    if v == t.expected:
                        yield from self._add(s, k, e, "U", w, None)
                    if v != t.expected or t.weak:
                        yield from self._add(s, k, e, "R", w, None)

    def _add(self, s: _State, k: int, e: int, kind: str, w, pos):
        lay = self.lay
        t = lay.tmpl[e]
        x = t.loc
        is_cas = t.kind == "C"
        acq = t.facq if (is_cas and kind == "R") else t.acq
        n = s.copy()
        n.lens[k] += 1
        n.kind[e] = kind
        n.present |= 1 << e
        bit = 1 << e
        # direct po predecessor(s)
        i = e - lay.base[k]
        po_pred = lay.init_mask if i == 0 else (1 << (e - 1))
        po_all = lay.init_mask | (((1 << e) - 1) & ~((1 << lay.base[k]) - 1))
        # --- rf / mo placement, atomicity ---
        if kind in ("R", "U"):
            n.rf[e] = w
            n.rval[e] = s.wval[w]
        seq = n.mo.get(x)
        if kind == "U":
            if any(n.kind.get(u) == "U" and n.rf.get(u) == w for u in seq):
                return  # another RMW already reads from w: atomicity
            p = seq.index(w) + 1
            seq.insert(p, e)
            n.wval[e] = t.desired if is_cas else apply_rmw(t.op, n.rval[e], t.value)
        elif kind == "W":
            if pos < len(seq) and n.kind.get(seq[pos]) == "U" and n.rf.get(seq[pos]) == seq[pos - 1]:
                return  # between an RMW and the write it reads from: atomicity
            seq.insert(pos, e)
            n.wval[e] = t.value
        # --- hb: sw edges into e ---
        sw_src = 0
        if kind in ("R", "U") and acq:
            sw_src |= self._release_heads(n, w)
        if kind == "F" and t.acq:
            for j in range(lay.base[k], e):
                if n.kind.get(j) in ("R", "U"):
                    sw_src |= self._release_heads(n, n.rf[j])
        n.hb_in[e] = self._hb_from(n, po_pred | sw_src)
        # --- eco / hb_SC direct neighbours of e ---
        eco_pred = eco_succ = 0
        if kind in ("R", "U", "W"):
            seq = n.mo[x]
            p = seq.index(e) if kind != "R" else None
            if kind in ("W", "U"):
                for j, a in enumerate(seq):
                    if j < p:
                        eco_pred |= 1 << a
                    elif j > p:
                        eco_succ |= 1 << a
                # fr into e: readers of writes mo-before e
                before = set(seq[:p])
                for r, src in n.rf.items():
                    if r != e and src in before:
                        eco_pred |= 1 << r
            if kind in ("R", "U"):
                eco_pred |= 1 << w
                after = seq[seq.index(w) + 1:]
                for a in after:
                    if a != e:
                        eco_succ |= 1 << a
        # coherence: hb ; eco? irreflexive (only cycles through e are new)
        eco_out_e = eco_succ
        for b in _bits(eco_succ):
            eco_out_e |= s.eco_out[b]
        if n.hb_in[e] & eco_out_e:
            return
        if eco_out_e & bit:
            return  # an eco cycle (cannot happen with a total mo; kept as a guard)
        n.eco_out[e] = eco_out_e
        if eco_pred:
            for a in _bits(n.present & ~bit):
                if (eco_pred >> a) & 1 or s.eco_out[a] & eco_pred:
                    n.eco_out[a] |= bit | eco_out_e
        yield k, n, e, (po_all | eco_pred, eco_succ)

    def _sc_update(self, s: _State, n: _State, e: int, preds: int, succs: int) -> bool:
        """Updates n.sc_out for hb_SC = (po ∪ rf ∪ mo ∪ fr)+; False if e closes a cycle."""
        out_e = succs
        for b in _bits(succs):
            out_e |= s.sc_out[b]
        if out_e & (preds | (1 << e)):
            return False
        n.sc_out[e] = out_e
        bit = 1 << e
        for a in _bits(n.present & ~bit):
            if (preds >> a) & 1 or s.sc_out[a] & preds:
                n.sc_out[a] |= bit | out_e
        return True

    def run(self) -> Result:
        start = self._initial()
        seen = {start.key()}
        stack = [start]
        count = 1
        while stack:
            s = stack.pop()
            for _k, n, e, (preds, succs) in self.successors(s):
                key = n.key()
                if key in seen:
                    continue
                seen.add(key)
                count += 1
                if count > self.limit:
                    raise RuntimeError(f"more than {self.limit} graphs: program too large")
                if not self._sc_update(s, n, e, preds, succs):
                    return Result(False, count, self.describe(n))
                stack.append(n)
        return Result(True, count)

    def describe(self, s: _State) -> dict:
        """A readable form of a graph: events with their values, rf and mo."""
        lay = self.lay
        evs = []
        for k in range(len(s.lens)):
            for i in range(s.lens[k]):
                e = lay.index(k, i)
                t = lay.tmpl[e]
                d = {"id": e, "thread": k, "op": t.src, "kind": s.kind[e], "loc": t.loc}
                if e in s.rf:
                    src = s.rf[e]
                    d["rf"] = "init" if src < lay.ninit else src
                    d["read"] = s.rval[e]
                if s.kind[e] in ("W", "U"):
                    d["wrote"] = s.wval[e]
                evs.append(d)
        mo = {x: ["init" if a < lay.ninit else a for a in v] for x, v in s.mo.items()}
        return {"events": evs, "mo": mo}


def robust(threads, sc: str = "fenced") -> bool:
    """True iff every RC20-consistent execution graph of the program is SC-consistent."""
    return Enumerator(threads, sc).run().robust


def check(threads, sc: str = "fenced") -> Result:
    return Enumerator(threads, sc).run()

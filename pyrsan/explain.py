"""Why a report holds: the execution of the run that shows it.

The runtime's explain log (option ``explain_path``, docs/interfaces.md "Explain log") lists the
events of the SC run in the order they were performed, and marks where each report was
published. From it this module rebuilds the execution graph up to the report (RSAN paper §2:
po, rf, mo, fr; SC fences and, under ``sc_accesses=fenced``, seq_cst accesses are totally
ordered through the SC-fence location) and C11 happens-before (algorithm.md §5, vector
clocks), and derives the explanation:

* robustness: the access e of thread τ may read (write) against the write ``previous`` that τ
  is hb-aware of, although SC forces the write ``forced``; the cycle is e -fr-> forced
  (-mo-> for a write) followed by the shortest hb_SC path from ``forced`` back to an event of
  τ before e, then po to e. The first step of that path that is not happens-before says why
  nothing orders ``forced`` before e.
* race: the two accesses, the reads-from pairs between the two threads after the first one and
  before the second, and why none of them synchronises (the missing release / acquire).

Nothing here assumes a program shape: every event, edge and sentence comes from the log and
the report. The result is a JSON-able dict (``Explanation``) that the renderers
(explain_render.py) and SARIF code flows (sarif.py) read.
"""

from __future__ import annotations

import json
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

#: The first line of an explain log (runtime/src/explain.c).
HEADER_KEY = "pyrsan_events"
ACQUIRE_ORDERS = frozenset({"acquire", "consume", "acq_rel", "seq_cst"})
RELEASE_ORDERS = frozenset({"release", "acq_rel", "seq_cst"})
#: At most this many ordering events (fences, synchronising accesses of the threads involved)
#: in a timeline: those nearest the access.
MAX_ORDERING = 24
#: Edge kinds of hb_SC (RSAN paper Def. 2.1) plus the SC-fence order and thread edges.
SC_EDGE_KINDS = ("po", "rf", "mo", "fr", "sc", "spawn", "join")


class ExplainError(ValueError):
    """The log cannot explain this report (message says why)."""


@dataclass
class Event:
    id: int
    tid: int
    op: str
    atomic: bool = False
    order: str | None = None
    addr: str | None = None
    read: int | None = None
    written: int | None = None
    site: str | None = None
    other: int | None = None           # spawn / join: the child / joinee
    pending: bool = False               # the access a report names, not yet performed

    @property
    def is_read(self) -> bool:
        return self.read is not None or self.op in ("acquire", "acquire_load", "read")

    @property
    def is_write(self) -> bool:
        return self.written is not None or self.op in ("acquire", "release", "write")

    @property
    def memory(self) -> bool:
        """Takes part in rf / mo / fr (atomic accesses and the modelled sync primitives)."""
        return self.addr is not None and (self.atomic or self.op in ("acquire", "acquire_load", "release"))


@dataclass
class EventLog:
    """One process's explain log."""

    pid: int | None
    events: list[Event] = field(default_factory=list)
    sites: dict[str, dict[str, Any]] = field(default_factory=dict)
    locations: dict[str, dict[str, Any]] = field(default_factory=dict)
    reports: dict[str, tuple[int, int]] = field(default_factory=dict)   # key -> (position, tid)
    truncated: bool = False


def is_event_log(path: str | os.PathLike) -> bool:
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as handle:
            first = handle.readline()
    except OSError:
        return False
    return first.startswith("{") and f'"{HEADER_KEY}"' in first


def read_event_log(path: str | os.PathLike) -> EventLog:
    """Parses an explain log; a line that does not decode (a truncated last line) is skipped."""
    log = EventLog(None)
    with open(path, "r", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if not isinstance(obj, dict):
                continue
            if HEADER_KEY in obj:
                log.pid = obj.get("pid")
            elif "report" in obj:
                log.reports.setdefault(str(obj["report"]), (len(log.events), int(obj.get("tid", -1))))
            elif "e" in obj:
                log.events.append(Event(
                    id=int(obj["e"]), tid=int(obj.get("tid", -1)), op=str(obj.get("op", "?")),
                    atomic=bool(obj.get("atomic", False)), order=obj.get("order"), addr=obj.get("addr"),
                    read=obj.get("read"), written=obj.get("written"), site=obj.get("site"),
                    other=obj.get("other")))
            elif "site" in obj:
                log.sites[str(obj["site"])] = obj
            elif "loc" in obj:
                log.locations[str(obj["loc"])] = obj
            elif "truncated" in obj:
                log.truncated = True
    return log


def read_event_logs(paths: Iterable[str | os.PathLike]) -> dict[int, EventLog]:
    """The explain logs among ``paths``, by pid."""
    logs: dict[int, EventLog] = {}
    for path in paths:
        if is_event_log(path):
            log = read_event_log(path)
            if log.pid is not None:
                logs[int(log.pid)] = log
    return logs


# --- the graph -----------------------------------------------------------------------------

class Graph:
    """The execution graph of a prefix of the log: events, hb_SC edges, C11 hb clocks."""

    def __init__(self, log: EventLog, events: list[Event], sc_fenced: bool):
        self.log = log
        self.events = events
        self.by_id = {e.id: e for e in events}
        self.out: dict[int, list[tuple[int, str]]] = {e.id: [] for e in events}
        self.rf: dict[int, int] = {}              # read -> write (negative id: initial write)
        self.writes: dict[str, list[int]] = {}    # addr -> writes in mo order (log order)
        self.init_ids: dict[str, int] = {}
        self.pos = {e.id: i for i, e in enumerate(events)}
        self._build(sc_fenced)
        self.clock: dict[int, dict[int, int]] = {}
        self._hb_clocks()

    def init_write(self, addr: str) -> int:
        if addr not in self.init_ids:
            self.init_ids[addr] = -1 - len(self.init_ids)
            self.out[self.init_ids[addr]] = []
        return self.init_ids[addr]

    def _edge(self, a: int, b: int, kind: str) -> None:
        self.out.setdefault(a, []).append((b, kind))

    def _build(self, sc_fenced: bool) -> None:
        last_of: dict[int, int] = {}
        first_of: dict[int, int] = {}
        spawned_at: dict[int, int] = {}
        last_write: dict[str, int] = {}
        readers_of: dict[int, list[int]] = {}
        last_sc: int | None = None
        for e in self.events:
            if e.tid in last_of:
                self._edge(last_of[e.tid], e.id, "po")
            else:
                first_of[e.tid] = e.id
                if e.tid in spawned_at:
                    self._edge(spawned_at[e.tid], e.id, "spawn")
            last_of[e.tid] = e.id
            if e.op == "spawn" and e.other is not None:
                spawned_at[e.other] = e.id
            if e.op == "join" and e.other in last_of:
                self._edge(last_of[e.other], e.id, "join")
            if e.memory and e.addr is not None:
                source = last_write.get(e.addr)
                if source is None:
                    source = self.init_write(e.addr)
                if e.is_read:
                    self.rf[e.id] = source
                    self._edge(source, e.id, "rf")
                    readers_of.setdefault(source, []).append(e.id)
                if e.is_write:
                    self.writes.setdefault(e.addr, []).append(e.id)
                    self._edge(source, e.id, "mo")
                    for r in readers_of.get(source, []):
                        if r != e.id:
                            self._edge(r, e.id, "fr")
                    last_write[e.addr] = e.id
            sc = e.op == "fence" and e.order == "seq_cst" or (sc_fenced and e.atomic and e.order == "seq_cst")
            if sc:
                if last_sc is not None:
                    self._edge(last_sc, e.id, "sc")
                last_sc = e.id

    # C11 happens-before (algorithm.md §5): per event, the clock of what happens before it.
    def _hb_clocks(self) -> None:
        cur: dict[int, dict[int, int]] = {}
        rel: dict[int, dict[int, int]] = {}
        acq: dict[int, dict[int, int]] = {}
        sync: dict[str, dict[int, int]] = {}
        at_spawn: dict[int, dict[int, int]] = {}
        final: dict[int, dict[int, int]] = {}

        def join(a: dict[int, int], b: Mapping[int, int]) -> None:
            for k, v in b.items():
                if a.get(k, -1) < v:
                    a[k] = v

        for n, e in enumerate(self.events):
            t = e.tid
            if t not in cur:
                cur[t] = dict(at_spawn.get(t, {}))
                rel[t] = {}
                acq[t] = dict(cur[t])
            c = cur[t]
            c[t] = n
            order = e.order or ("acquire" if e.op in ("acquire", "acquire_load") else
                                "release" if e.op == "release" else "relaxed")
            if e.memory and e.addr is not None:
                s = sync.setdefault(e.addr, {})
                if e.is_read:
                    join(acq[t], s)
                    if order in ACQUIRE_ORDERS:
                        join(c, s)
                if e.is_write:
                    released = c if order in RELEASE_ORDERS else rel[t]
                    if e.is_read:          # RMW: continues the release sequence
                        join(s, released)
                    else:
                        sync[e.addr] = dict(released)
            elif e.op == "fence":
                if order in ACQUIRE_ORDERS:
                    join(c, acq[t])
                if order in RELEASE_ORDERS:
                    rel[t] = dict(c)
            elif e.op == "spawn" and e.other is not None:
                at_spawn[e.other] = dict(c)
            elif e.op == "join" and e.other in final:
                join(c, final[e.other])
            self.clock[e.id] = dict(c)
            final[t] = dict(c)

    def hb(self, a: int, b: int) -> bool:
        """a happens before b (po included); initial writes happen before everything."""
        if a < 0:
            return True
        ea, eb = self.by_id.get(a), self.by_id.get(b)
        if ea is None or eb is None:
            return False
        if ea.tid == eb.tid:
            return self.pos[a] < self.pos[b]
        return self.clock[b].get(ea.tid, -1) >= self.pos[a]

    def path(self, source: int, targets: set[int]) -> list[tuple[int, str]] | None:
        """Shortest hb_SC path from source to one of targets: [(event, kind of the edge into it)]."""
        previous: dict[int, tuple[int, str]] = {}
        queue = deque([source])
        seen = {source}
        while queue:
            node = queue.popleft()
            if node in targets and node != source:
                steps = []
                while node != source:
                    before, kind = previous[node]
                    steps.append((node, kind))
                    node = before
                return steps[::-1]
            for nxt, kind in self.out.get(node, []):
                if nxt not in seen:
                    seen.add(nxt)
                    previous[nxt] = (node, kind)
                    queue.append(nxt)
        return None

    def synchronises(self, w: int, r: int) -> bool:
        """The rf edge w -> r is (part of) happens-before."""
        return self.hb(w, r)


# --- describing events ------------------------------------------------------------------------

def _tname(tid: int | None) -> str:
    return f"T{tid}" if tid is not None and tid >= 0 else "init"


class Describer:
    def __init__(self, log: EventLog):
        self.log = log

    def location(self, addr: str | None) -> str:
        if addr is None:
            return "?"
        loc = self.log.locations.get(addr) or {}
        return str(loc.get("name") or addr)

    def init_value(self, addr: str | None) -> int | None:
        loc = self.log.locations.get(addr or "") or {}
        value = loc.get("init")
        return value if isinstance(value, int) else None

    def where(self, e: Event) -> dict[str, Any]:
        site = self.log.sites.get(e.site or "") or {}
        return {k: site[k] for k in ("file", "line", "column", "function") if k in site}

    def short(self, e: Event) -> str:
        w = self.where(e)
        if not w.get("file"):
            return "?"
        return f"{os.path.basename(str(w['file']))}:{w.get('line', '?')}"

    def label(self, e: Event) -> str:
        """Compact: ``W x=1 rlx``, ``R y=0 acq``, ``RMW x 0->1``, ``F sc``, ``spawn T2``."""
        order = {"relaxed": "rlx", "acquire": "acq", "release": "rel", "acq_rel": "acq_rel",
                 "seq_cst": "sc", "consume": "acq"}.get(e.order or "", e.order or "")
        x = self.location(e.addr)
        if e.op == "fence":
            return f"F {order}"
        if e.op in ("spawn", "join"):
            return f"{e.op} {_tname(e.other)}"
        if e.op == "acquire":
            return f"lock {x}"
        if e.op == "acquire_load":
            return f"acquire {x}"
        if e.op == "release":
            return f"unlock {x}"
        if e.op in ("read", "write"):
            return f"{'R' if e.op == 'read' else 'W'} {x} (plain)"
        if e.pending:
            return f"{'W' if e.is_write and not e.is_read else 'R' if not e.is_write else 'RMW'} {x} {order}".strip()
        if e.is_read and e.is_write:
            if e.written is None:
                return f"{e.op} {x}={e.read} {order} (failed)"
            return f"{e.op} {x} {e.read}->{e.written} {order}"
        if e.is_write:
            return f"W {x}={e.written} {order}"
        return f"R {x}={e.read} {order}"

    def phrase(self, e: Event) -> str:
        """``T1's store x = 1 (sb.c:15)``"""
        x = self.location(e.addr)
        what = {"load": f"load of {x}", "store": f"store {x} = {e.written}", "wait": f"wait on {x}",
                "read": f"read of {x}", "write": f"write to {x}", "fence": f"{e.order} fence",
                "acquire": f"lock of {x}", "release": f"unlock of {x}", "acquire_load": f"acquire of {x}",
                "spawn": f"creation of {_tname(e.other)}", "join": f"join of {_tname(e.other)}"}.get(e.op)
        if what is None:
            what = f"{e.op} on {x}"
        if e.op == "load" and e.read is not None and not e.pending:
            what = f"load of {x} = {e.read}"
        return f"{_tname(e.tid)}'s {what} ({self.short(e)})"


# --- the explanation ------------------------------------------------------------------------

def _sc_fenced(report: Mapping[str, Any]) -> bool:
    return "sc_accesses=ra" not in str(report.get("model", ""))


def _find_access(log: EventLog, position: int, tid: int, site: str | None, addr: str | None,
                 plain_ok: bool) -> Event | None:
    """The last event of tid before position at site (and addr when given)."""
    for e in reversed(log.events[:position]):
        if e.tid != tid:
            continue
        if e.site == site and (addr is None or e.addr == addr or not e.atomic):
            return e
        if not plain_ok:
            return None
    return None


def _nth_write(graph: Graph, addr: str, ts: int, non_rmw: bool, side: Mapping[str, Any] | None = None) -> int | None:
    """The write to addr with timestamp ts (0: the initial write); non_rmw: U timestamps. When
    the report describes the write (``side``: site, thread, value) and the write at ts is not
    it (the location's record was retired and restarted its timestamps), the last write that
    matches the description."""
    if ts == 0:
        return graph.init_write(addr)
    count = 0
    found = None
    for w in graph.writes.get(addr, []):
        e = graph.by_id[w]
        if non_rmw and e.is_read:
            continue
        count += 1
        if count == ts:
            found = w
            break
    if side and side.get("site"):
        def fits(w: int) -> bool:
            e = graph.by_id[w]
            return e.site == side.get("site") and e.tid == side.get("thread") and e.written == side.get("value")

        if found is None or not fits(found):
            matching = [w for w in graph.writes.get(addr, []) if fits(w)]
            return matching[-1] if matching else None
    return found


def explain_report(report: Mapping[str, Any], log: EventLog) -> dict[str, Any]:
    """The explanation of one report (its JSON fields) from its process's explain log."""
    key = str(report.get("key", ""))
    if key not in log.reports:
        raise ExplainError(f"the explain log of pid {log.pid} has no marker for report {key}"
                           + (" (the log was truncated)" if log.truncated else ""))
    position, tid = log.reports[key]
    if report.get("kind") == "race":
        return _explain_race(report, log, position)
    return _explain_robustness(report, log, position, tid)


def _explain_robustness(report: Mapping[str, Any], log: EventLog, position: int, tid: int) -> dict[str, Any]:
    d = Describer(log)
    access = report.get("access") or {}
    addr = _addr_key((report.get("location") or {}).get("address"))
    is_write = report.get("type") == "write"
    e = _find_access(log, position, tid, access.get("site"), addr, plain_ok=False)
    prefix = log.events[:log.events.index(e)] if e is not None else list(log.events[:position])
    # plain accesses are no events of the robustness model (RSAN paper §5: atomics, fences)
    prefix = [x for x in prefix if x.op not in ("read", "write")]
    if e is None:   # checked before it could happen (a wait that blocks): the next access of tid
        op = str(access.get("operation", "load"))
        e = Event(id=max((x.id for x in log.events), default=0) + 1, tid=tid, op=op, atomic=True,
                  order=access.get("order"), addr=addr, site=access.get("site"), pending=True)
        if is_write:
            e.written = None
    graph = Graph(log, prefix, _sc_fenced(report))
    graph.by_id[e.id] = e
    ts = report.get("timestamps") or {}
    forced = _nth_write(graph, addr, int(ts.get("sc", 0)), is_write, report.get("forced")) if addr else None
    stale = _nth_write(graph, addr, int(ts.get("hb", 0)), is_write, report.get("previous")) if addr else None
    if forced is None or forced < 0:
        raise ExplainError("the write SC forces is not in the explain log")
    own = {x.id for x in prefix if x.tid == tid}
    steps = graph.path(forced, own)
    if steps is None:
        raise ExplainError("no hb_SC path from the forced write to the access's thread in the log")
    fe = graph.by_id[forced]
    first_kind = "mo" if is_write else "fr"
    cycle = [e.id, forced] + [n for n, _ in steps] + [e.id]
    kinds = [first_kind] + [k for _, k in steps] + ["po"]
    x = d.location(addr)
    stale_value = d.init_value(addr) if stale is not None and stale < 0 else (
        graph.by_id[stale].written if stale is not None else None)
    stale_text = (f"x = {stale_value}".replace("x", x, 1) if stale_value is not None else f"an older value of {x}")
    if stale is not None and stale < 0:
        stale_what = f"the initial value ({stale_text})"
    elif stale is not None:
        stale_what = f"{stale_text} from {d.phrase(graph.by_id[stale])}"
    else:
        stale_what = f"an older value of {x}"
    # the step of the path that is not happens-before: why nothing orders forced before e
    reason = _first_non_hb(graph, d, [forced] + [n for n, _ in steps], [k for _, k in steps])
    last_own = graph.by_id[steps[-1][0]]
    if is_write:
        outcome = (f"{d.phrase(e)} may take effect before {d.phrase(fe)}, right after {stale_what} in {x}'s "
                   f"modification order, although {_tname(fe.tid)} already wrote {x} = {fe.written} before "
                   f"{d.phrase(last_own)}")
    else:
        outcome = (f"{_tname(tid)} may read {stale_what} at {d.short(e)} although {_tname(fe.tid)} already wrote "
                   f"{x} = {fe.written} ({d.short(fe)}) before {d.phrase(last_own)}")
    outcome += f", because nothing orders {d.phrase(fe)} before {_tname(tid)}'s access: {reason}."
    involved = set(cycle) | ({stale} if stale is not None else set())
    events = _timeline_events(graph, d, involved, e, {e.id: "access", forced: "forced",
                                                     **({stale: "stale"} if stale is not None else {})})
    for item in events:     # the access as the weak execution has it
        if item["id"] == e.id and not is_write and stale_value is not None and e.read is not None:
            item["label"] = d.label(Event(**{**e.__dict__, "read": stale_value})) + " (weak)"
            item["sc_read"] = e.read
    edges = _edges_between(graph, {ev["id"] for ev in events})
    cycle_edges = list(zip(cycle, cycle[1:], kinds))
    for a, b, k in cycle_edges:
        _mark_edge(edges, a, b, k)
    if stale is not None:   # the weak execution's own edge: e reads from (is mo-after) the stale write
        edges.append({"from": stale, "to": e.id, "kind": "mo" if is_write else "rf", "weak": True, "cycle": False})
    return {
        "kind": "robustness",
        "threads": sorted({ev["tid"] for ev in events if ev["tid"] is not None and ev["tid"] >= 0}),
        "events": events,
        "edges": edges,
        "cycle": cycle,
        "cycle_kinds": kinds,
        "cycle_text": _cycle_text(events, cycle, kinds),
        "outcome": outcome,
        "why": reason,
    }


def _first_non_hb(graph: Graph, d: Describer, nodes: list[int], kinds: list[str]) -> str:
    for (a, b), kind in zip(zip(nodes, nodes[1:]), kinds):
        if kind in ("po", "spawn", "join") or (kind == "rf" and graph.synchronises(a, b)):
            continue
        ea, eb = graph.by_id[a], graph.by_id[b]
        if kind == "fr":
            return (f"{d.phrase(ea)} comes before {d.phrase(eb)} only because it read the older value "
                    f"(from-read, an SC order that is not happens-before)")
        if kind == "mo":
            return (f"{d.phrase(ea)} precedes {d.phrase(eb)} only in {d.location(ea.addr)}'s modification "
                    f"order, which is not happens-before")
        if kind == "rf":
            return (f"{d.phrase(eb)} reads from {d.phrase(ea)} but they do not synchronise "
                    f"({_missing_pair(graph, ea, eb)})")
        if kind == "sc":
            return (f"{d.phrase(ea)} precedes {d.phrase(eb)} only in the total order of SC fences, which orders "
                    f"nothing by itself in happens-before")
    return "each step of the SC order is happens-before, but the access's thread is not aware of the write"


def _missing_pair(graph: Graph, w: Event, r: Event) -> str:
    """Why an rf edge is not synchronises-with (the release or the acquire side is missing)."""
    wrel = (w.order in RELEASE_ORDERS) or w.op == "release" or _fence_between(graph, w.tid, None, w, "release")
    racq = (r.order in ACQUIRE_ORDERS) or r.op in ("acquire", "acquire_load") or \
        _fence_between(graph, r.tid, r, None, "acquire")
    parts = []
    if not wrel:
        parts.append(f"the write is {w.order or 'plain'} with no release fence before it")
    if not racq:
        parts.append(f"the read is {r.order or 'plain'} with no acquire fence after it")
    return " and ".join(parts) or "the release sequence was broken by another write"


def _fence_between(graph: Graph, tid: int, after: Event | None, before: Event | None, kind: str) -> bool:
    orders = RELEASE_ORDERS if kind == "release" else ACQUIRE_ORDERS
    inside = after is None
    for e in graph.events:
        if after is not None and e.id == after.id:
            inside = True
            continue
        if before is not None and e.id == before.id:
            break
        if inside and e.tid == tid and e.op == "fence" and e.order in orders:
            return True
    return False


def _cycle_text(events: list[dict[str, Any]], cycle: list[int], kinds: list[str]) -> str:
    """``T2: R x=0 rlx (weak) sb.c:23 -fr-> T1: W x=1 rlx sb.c:15 -po-> ...``"""
    by_id = {ev["id"]: ev for ev in events}

    def node(i: int) -> str:
        ev = by_id.get(i) or {"label": "?", "tid": None}
        where = f" {os.path.basename(str(ev['file']))}:{ev.get('line', '?')}" if ev.get("file") else ""
        return f"{_tname(ev.get('tid'))}: {ev['label']}{where}"

    return " ".join(f"{node(a)} -{k}->" for a, k in zip(cycle, kinds)) + " " + node(cycle[-1])


def _timeline_events(graph: Graph, d: Describer, involved: set[int], access: Event,
                     roles: Mapping[int, str]) -> list[dict[str, Any]]:
    """The events that matter, in execution order: those named (involved), plus the ordering
    events (fences, non-relaxed accesses, sync primitives, spawn / join) of the involved
    threads between the first involved event and the access."""
    threads = {graph.by_id[i].tid for i in involved if i >= 0 and i in graph.by_id}
    first = min((graph.pos[i] for i in involved if i >= 0 and i in graph.pos), default=0)
    chosen: list[Event] = []
    repeats: dict[int, int] = {}
    # a loop's ordering events since the thread's last involved event: shown once, counted
    shown: dict[int, dict[tuple[Any, str], int]] = {}
    for e in graph.events[first:]:
        if e.id in involved:
            shown[e.tid] = {}
            chosen.append(e)
        elif e.tid in threads and _orders(e):
            key = (e.site, d.label(e))
            mine = shown.setdefault(e.tid, {})
            if key in mine:
                repeats[mine[key]] = repeats.get(mine[key], 1) + 1
                continue
            mine[key] = e.id
            chosen.append(e)
    ordering = [e for e in chosen if e.id not in involved]
    if len(ordering) > MAX_ORDERING:    # keep the ones nearest the access
        dropped = {e.id for e in ordering[:len(ordering) - MAX_ORDERING]}
        chosen = [e for e in chosen if e.id not in dropped]
    if access.pending or access.id not in graph.pos:
        chosen.append(access)
    out = []
    for init_addr, init_id in graph.init_ids.items():
        if init_id in involved:
            out.append({"id": init_id, "tid": None, "op": "init", "label": f"init {d.location(init_addr)}"
                        + (f"={d.init_value(init_addr)}" if d.init_value(init_addr) is not None else ""),
                        "location": d.location(init_addr), "role": roles.get(init_id, "cycle")})
    for e in chosen:
        label = d.label(e) + (f" ({repeats[e.id]} times)" if e.id in repeats else "")
        item: dict[str, Any] = {"id": e.id, "tid": e.tid, "op": e.op, "label": label,
                                "role": roles.get(e.id, "cycle" if e.id in involved else "ordering")}
        if e.order:
            item["order"] = e.order
        if e.addr:
            item["location"] = d.location(e.addr)
        if e.read is not None:
            item["read"] = e.read
        if e.written is not None:
            item["written"] = e.written
        if e.pending:
            item["pending"] = True
        item.update(d.where(e))
        out.append(item)
    return out


def _orders(e: Event) -> bool:
    if e.op in ("fence", "spawn", "join", "acquire", "acquire_load", "release"):
        return True
    return e.atomic and (e.order or "relaxed") != "relaxed"


def _edges_between(graph: Graph, ids: set[int]) -> list[dict[str, Any]]:
    """po between consecutive shown events of a thread; rf / mo / fr / sc among shown events;
    hb (synchronises-with) for rf edges that are part of happens-before."""
    edges: list[dict[str, Any]] = []
    by_thread: dict[int, int] = {}
    for e in graph.events:
        if e.id not in ids:
            continue
        if e.tid in by_thread:
            edges.append({"from": by_thread[e.tid], "to": e.id, "kind": "po", "cycle": False})
        by_thread[e.tid] = e.id
    for a in list(ids):
        for b, kind in graph.out.get(a, []):
            if b in ids and kind not in ("po",):
                edges.append({"from": a, "to": b, "kind": kind, "cycle": False})
                if kind == "rf" and a >= 0 and graph.by_id[a].tid != graph.by_id[b].tid and graph.synchronises(a, b):
                    edges.append({"from": a, "to": b, "kind": "hb", "cycle": False})
    # the pending access (not in the graph's events): po from its thread's last shown event
    for i in ids:
        pending = graph.by_id.get(i)
        if pending is not None and i not in graph.pos and pending.tid in by_thread:
            edges.append({"from": by_thread[pending.tid], "to": i, "kind": "po", "cycle": False})
    return edges


def _mark_edge(edges: list[dict[str, Any]], a: int, b: int, kind: str) -> None:
    for edge in edges:
        if edge["from"] == a and edge["to"] == b and edge["kind"] == kind:
            edge["cycle"] = True
            return
    edges.append({"from": a, "to": b, "kind": kind, "cycle": True})


def _addr_key(address: Any) -> str | None:
    if address is None:
        return None
    try:
        return hex(int(str(address), 16))
    except ValueError:
        return str(address)


def _explain_race(report: Mapping[str, Any], log: EventLog, position: int) -> dict[str, Any]:
    d = Describer(log)
    access = report.get("access") or {}
    previous = report.get("previous") or {}
    t, u = int(access.get("thread", -1)), int(previous.get("thread", -1))
    b = _find_access(log, position, t, access.get("site"), None, plain_ok=True)
    if b is None:
        raise ExplainError("the racing access is not in the explain log")
    upto = log.events.index(b)
    a = _find_access(log, upto, u, previous.get("site"), None, plain_ok=True)
    if a is None:
        raise ExplainError("the earlier racing access is not in the explain log")
    graph = Graph(log, log.events[:upto + 1], _sc_fenced(report))
    if graph.hb(a.id, b.id):
        raise ExplainError("the log orders the two accesses by happens-before (the log is not the run's order)")
    # reads of t before b that read from writes of u after a: the pairs that could have synchronised
    pairs = []
    for r_id, w_id in graph.rf.items():
        if w_id < 0:
            continue
        r, w = graph.by_id[r_id], graph.by_id[w_id]
        if r.tid == t and w.tid == u and graph.pos[a.id] < graph.pos[w_id] and graph.pos[r_id] < graph.pos[b.id]:
            pairs.append((w, r))
    x = d.location(b.addr)
    # a free() / delete is logged as a plain write of its block (explain.c rsan_explain_free)
    b_phrase = d.phrase(b)
    if access.get("free"):
        b_phrase = b_phrase.replace(f"write to {x}", f"free of the block at {x}", 1)
    if pairs:
        w, r = pairs[-1]
        why = (f"{d.phrase(r)} reads from {d.phrase(w)}, but they do not synchronise "
               f"({_missing_pair(graph, w, r)}), so {d.phrase(a)} does not happen before {b_phrase}")
    else:
        why = (f"{_tname(t)} reads nothing {_tname(u)} wrote after {d.phrase(a)} (no release/acquire pair, lock or "
               f"join between them), so neither access happens before the other")
    outcome = (f"{d.phrase(a)} and {b_phrase} conflict on {x} and neither happens before the other: "
               f"{why}.")
    involved = {a.id, b.id} | {w.id for w, _ in pairs} | {r.id for _, r in pairs}
    events = _timeline_events(graph, d, involved, b, {a.id: "previous", b.id: "access"})
    edges = _edges_between(graph, {ev["id"] for ev in events})
    edges.append({"from": a.id, "to": b.id, "kind": "race", "cycle": True})
    return {
        "kind": "race",
        "threads": sorted({ev["tid"] for ev in events if ev["tid"] is not None and ev["tid"] >= 0}),
        "events": events,
        "edges": edges,
        "cycle": [],
        "cycle_kinds": [],
        "cycle_text": "",
        "outcome": outcome,
        "why": why,
    }


def attach_explanations(reports: Iterable[Any], logs: Mapping[int, EventLog]) -> dict[str, dict[str, Any]]:
    """key -> explanation (or {"error": ...}) for the reports whose pid has a log."""
    out: dict[str, dict[str, Any]] = {}
    for report in reports:
        fields = report.fields if hasattr(report, "fields") else report
        pid = fields.get("pid")
        key = str(fields.get("key", ""))
        if not isinstance(pid, int) or pid not in logs or key in out:
            continue
        try:
            out[key] = explain_report(fields, logs[pid])
        except ExplainError as exc:
            out[key] = {"error": str(exc)}
    return out


def event_log_files(directory: str | os.PathLike) -> list[Path]:
    return sorted(p for p in Path(directory).glob("events*.jsonl") if p.is_file())


def explained_reports(reports: Iterable[Any], directory: str | os.PathLike) -> tuple[Any, ...]:
    """The reports of one run directory, each with an ``explanation`` field computed from the
    run's explain logs (``events.<pid>.jsonl``)."""
    from types import MappingProxyType

    from .reports import NOT_VIOLATION_KINDS, Report

    reports = tuple(reports)
    logs = read_event_logs(event_log_files(directory))
    found = attach_explanations([r for r in reports if r.kind not in NOT_VIOLATION_KINDS], logs)
    out = []
    for r in reports:
        explanation = found.get(r.key)
        if explanation is None and r.kind not in NOT_VIOLATION_KINDS:
            explanation = {"error": "no explain log for this process"}
        if explanation is None:
            out.append(r)
            continue
        fields = dict(r.fields)
        fields["explanation"] = explanation
        out.append(Report(r.key, r.kind, r.type, r.text, MappingProxyType(fields)))
    return tuple(out)


def load_explained(source: str) -> list[dict[str, Any]]:
    """The reports (fields) of a ``pyrsan run --json`` document, or of runtime JSON-lines logs
    with their explanations computed from the explain logs next to them (same directory)."""
    from .errors import UsageError
    from .reports import NOT_VIOLATION_KINDS, find_log_files, read_report_file

    if not os.path.exists(source):
        raise UsageError(f"{source}: no such file or directory")
    if os.path.isfile(source):
        try:
            document = json.loads(Path(source).read_text(encoding="utf-8", errors="replace"))
        except ValueError:
            document = None
        except OSError as exc:
            raise UsageError(f"cannot read {source}: {exc.strerror or exc}") from None
        if isinstance(document, dict) and isinstance(document.get("reports"), list):
            return [r for r in document["reports"] if isinstance(r, dict)]
    files = find_log_files([source])
    neighbours = files if os.path.isdir(source) else sorted(Path(source).resolve().parent.glob("*.jsonl"))
    logs = read_event_logs(neighbours)
    reports: dict[str, dict[str, Any]] = {}
    for path in files:
        if is_event_log(path):
            continue
        for report in read_report_file(path):
            if report.kind not in NOT_VIOLATION_KINDS:
                reports.setdefault(report.key, dict(report.fields))
    found = attach_explanations(list(reports.values()), logs)
    for key, fields in reports.items():
        fields["explanation"] = found.get(key) or {"error": "no explain log for this process "
                                                            "(runtime option explain_path)"}
        fields.pop("text", None)
    return list(reports.values())


def select_report(reports: list[dict[str, Any]], key: str | None) -> list[dict[str, Any]]:
    """All reports, or the one KEY names (its number from 1, its key, or a unique key prefix)."""
    from .errors import UsageError

    if not reports:
        raise UsageError("no reports to explain")
    if key is None:
        return reports
    if key.isdigit() and 1 <= int(key) <= len(reports):
        return [reports[int(key) - 1]]
    matches = [r for r in reports if str(r.get("key", "")) == key] or \
        [r for r in reports if str(r.get("key", "")).startswith(key)]
    if len(matches) != 1:
        known = ", ".join(f"{i} {r.get('key')}" for i, r in enumerate(reports, 1))
        raise UsageError(f"no single report with key {key!r} (reports: {known})")
    return matches


def with_log_explanations(reports: Iterable[Any], files: Iterable[str | os.PathLike]) -> tuple[Any, ...]:
    """`pyrsan report`: the distinct reports, each with an ``explanation`` when an explain log
    of its process is among ``files`` (matched by pid); the others unchanged."""
    from dataclasses import replace
    from types import MappingProxyType

    from .reports import Report

    reports = tuple(reports)
    logs = read_event_logs(files)
    if not logs:
        return reports
    found = attach_explanations([d.report for d in reports], logs)
    out = []
    for d in reports:
        explanation = found.get(d.report.key)
        if explanation is None or explanation.get("error"):
            out.append(d)
            continue
        r = d.report
        fields = MappingProxyType({**r.fields, "explanation": explanation})
        out.append(replace(d, report=Report(r.key, r.kind, r.type, r.text, fields)))
    return tuple(out)

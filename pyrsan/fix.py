"""The fixing loop of `pyrsan fix`: analyse, repair at the IR level, re-check until
no violation remains, then drop every repair that is not needed, and turn the rest into a
source patch.

Candidates for one report, tried in this order, one more per round while the report's access
still misbehaves (architecture.md "Fix loop": prefer fences):
  1. a seq_cst fence after the reporting thread's previous access to another location (the
     report's `repair.after`), i.e. between the two accesses the cycle runs through;
  2. a fence after the write SC forces the access to see, in the writer's thread
     (`repair.writer`): an SB- or MP-shaped cycle needs a fence on both sides;
  3. a fence right before the access itself;
  Fences at sites in the user's code come before those at sites in system headers (a fence
  there can only be a manual step of the patch): when the forced write is in a header (the
  CAS of libstdc++'s out-of-line __fetch_add_flt), the writer's side is first tried as a fence
  before its next user-code access after its call (the write's frame outside headers).
  4. the access made seq_cst, then the forced write, the stale write and the thread's earlier
     access (when not seq_cst already); any order repair makes every later check use
     sc_accesses=ra (the fenced model could hide what it leaves).
Before all of them, a report whose own repair is an acquire on the thread's earlier read
(docs/reports.md §5: cost one order) is tried first. A report names two or three threads,
but the cycle behind it may run through others (SC knowledge passed along relaxed accesses
of a third thread); when no report has a candidate left, one last round adds a fence after
every atomic access of the program (SC fences between all of a thread's accesses leave no
execution that SC forbids) and minimisation keeps the few that are needed.
Minimisation removes one repair at a time (orders first, then fences, newest first) and
keeps the removal when the check stays clean, so every repair left is needed: without it a
violation comes back in the check. When the repairs were proved (a complete exploration), a
removal also needs a proof: a clean sample of schedules keeps the repair (kept, unproved).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from .checker import (Program, CheckMethod, CheckOutcome, Repair, SiteInfo, check_program,
                      model_for)
from .abi import is_system_file
from .errors import BuildError, UsageError
from .patch import C_FENCE, CXX_FENCE, PatchPlan, plan_patch
from .toolchain import is_cxx_source
from .words import plural
from .reports import Report

DEFAULT_MAX_ROUNDS = 10
#: A fix whose last check was a sample (an exploration that hit its bound) is confirmed with an
#: exploration this many times wider before it is reported. A violation found then goes back to
#: the rounds with the repairs the samples removed, and every later check is that wide: a repair
#: that only the narrower samples missed is added, not reported as done.
CONFIRM_FACTOR = 10


@dataclass(frozen=True)
class FixOptions:
    method: CheckMethod = CheckMethod()
    max_rounds: int = DEFAULT_MAX_ROUNDS
    root: str = "."              # the directory patch paths are relative to
    verify_patch: bool = True
    keep_checks: bool = False    # keep each check's build and reports (--keep-temps)


@dataclass(frozen=True)
class Round:
    number: int
    added: tuple[Repair, ...]
    outcome: CheckOutcome        # the check with every repair so far


@dataclass(frozen=True)
class Removal:
    repair: Repair
    needed: bool
    outcome: CheckOutcome        # the check without it


@dataclass(frozen=True)
class Cost:
    fences: int
    orders: int
    all_seq_cst: int             # accesses whose order would change if all were seq_cst


@dataclass(frozen=True)
class FixResult:
    status: str                  # "robust" (nothing to fix), "fixed", "not_fixed"
    initial: CheckOutcome
    rounds: tuple[Round, ...]
    removals: tuple[Removal, ...]
    repairs: tuple[Repair, ...]  # the minimal set (empty unless fixed)
    final: CheckOutcome          # the check of `repairs` (or the last check when not fixed)
    cost: Cost
    sites: tuple[SiteInfo, ...]  # the unrepaired program's site tables
    plan: PatchPlan | None = None
    patched_check: CheckOutcome | None = None
    checks: int = 0
    confirmations: tuple[CheckOutcome, ...] = ()  # the wider checks of sampled fixes (CONFIRM_FACTOR)
    reason: str = ""             # why not fixed

    def site(self, repair: Repair) -> SiteInfo | None:
        for site in self.sites:
            if site.module == repair.module and site.index == repair.index:
                return site
        return None


def _site_id(value: object) -> int | None:
    if isinstance(value, str):
        try:
            return int(value, 16)
        except ValueError:
            return None
    return None


def _field_site(fields: dict, *path: str) -> int | None:
    node: object = fields
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return _site_id(node)


def candidates(report: Report, sites_by_id: dict[int, SiteInfo]) -> list[Repair]:
    """The repairs to try for one report, best first (module docstring)."""
    fields = dict(report.fields)
    thread = (fields.get("access") or {}).get("thread")
    out: list[Repair] = []

    def add(site_id: int | None, kind: str, position: str = "", who: object = thread,
            order: str = "seq_cst") -> None:
        site = sites_by_id.get(site_id) if site_id is not None else None
        if site is None or not site.is_access:
            return
        if kind == "order" and site.order == "seq_cst" and site.order_fail in ("", "seq_cst"):
            return  # already as strong as an order gets
        repair = Repair(kind, site.module, site.index, position,
                        who if isinstance(who, int) else None, order)
        if repair not in out:
            out.append(repair)

    access = _field_site(fields, "access", "site")
    forced = _field_site(fields, "forced", "site")
    writer = (fields.get("forced") or {}).get("thread")

    def in_user_code(site_id: int | None) -> bool:
        site = sites_by_id.get(site_id) if site_id is not None else None
        frame = site.primary if site is not None else None
        return frame is not None and not is_system_file(frame.file)

    def next_access_after(side: dict) -> int | None:
        """The first atomic access of the user's code after the user's call that made the
        write `side` (its frame outside system headers): the writer's side of the cycle when
        the write itself is in a system header (libstdc++'s out-of-line __fetch_add_flt)."""
        file, line, column, function = (side.get(k) for k in ("file", "line", "column", "function"))
        if not isinstance(file, str) or not isinstance(line, int) or is_system_file(file):
            return None
        best: tuple[int, int] | None = None
        found = None
        for site in sites_by_id.values():
            frame = site.primary
            if not site.is_access or frame is None or frame.file != file or frame.function != function:
                continue
            key = (frame.line, frame.column)
            if key > (line, column if isinstance(column, int) else 0) and (best is None or key < best):
                best, found = key, site.id
        return found

    # the report's own cheapest repair first when it is an acquire (docs/reports.md §5)
    suggested = fields.get("repair") or {}
    if suggested.get("kind") == "order" and suggested.get("order") in ("acquire", "acq_rel"):
        for named in suggested.get("accesses") or []:
            add(_site_id(named.get("site")), "order", order=suggested["order"])
    # fences at sites of the user's code first: a fence at a site in a system header can only be
    # a manual step of the patch (the one right before the access lies between the same two
    # accesses; the writer's side has the fence before its next access after its call)
    after = _field_site(fields, "repair", "after", "site")
    if in_user_code(after):
        add(after, "fence", "after")
    if writer != thread and in_user_code(forced):
        add(forced, "fence", "after", writer)
    elif writer != thread:
        add(next_access_after(fields.get("forced") or {}), "fence", "before", writer)
    add(access, "fence", "before")
    add(after, "fence", "after")
    if writer != thread:
        add(forced, "fence", "after", writer)
    add(access, "order")
    add(forced, "order", who=writer)
    add(_field_site(fields, "previous", "site"), "order",
        who=(fields.get("previous") or {}).get("thread"))
    add(_field_site(fields, "repair", "after", "site"), "order")
    return out


def fences_everywhere(sites: tuple[SiteInfo, ...], repairs: tuple[Repair, ...]) -> list[Repair]:
    """The last round's repairs (module docstring): a seq_cst fence after every atomic access
    that has none yet."""
    every = (Repair("fence", s.module, s.index, "after") for s in sites if s.is_access)
    return [r for r in every if r not in repairs]


def count_cost(repairs: tuple[Repair, ...], sites: tuple[SiteInfo, ...]) -> Cost:
    """Repairs against making every atomic access seq_cst (the paper's comparison)."""
    weaker = sum(1 for s in sites if s.is_access
                 and (s.order != "seq_cst" or (s.kind == "cas" and s.order_fail != "seq_cst")))
    return Cost(sum(r.kind == "fence" for r in repairs), sum(r.kind == "order" for r in repairs),
                weaker)


class _Checker:
    """check_program in numbered work directories, counting the checks."""

    def __init__(self, program: Program, method: CheckMethod, work_dir: str,
                 progress: Callable[[str], None] | None, keep: bool = False):
        self.keep = keep
        self.program = program
        self.method = method
        self.work_dir = work_dir
        self.count = 0
        self.progress = progress

    def __call__(self, repairs: tuple[Repair, ...], what: str, program: Program | None = None,
                 sc_accesses: str | None = None, method: CheckMethod | None = None) -> CheckOutcome:
        self.count += 1
        if self.progress is not None:
            self.progress(what)
        directory = os.path.join(self.work_dir, f"check{self.count}")
        outcome = check_program(program or self.program, repairs, method or self.method, directory,
                                sc_accesses)
        if not self.keep:
            shutil.rmtree(directory, ignore_errors=True)
        return outcome


def _sort_for_removal(repairs: tuple[Repair, ...]) -> list[Repair]:
    """Orders first (a fence is cheaper and keeps the fenced model), then the newest fences."""
    orders = [r for r in reversed(repairs) if r.kind == "order"]
    fences = [r for r in reversed(repairs) if r.kind == "fence"]
    return orders + fences


def fix_program(program: Program, options: FixOptions, work_dir: str,
                progress: Callable[[str], None] | None = None) -> FixResult:
    """The whole loop (module docstring). Never modifies the sources."""
    check = _Checker(program, options.method, work_dir, progress, options.keep_checks)
    initial = check((), "analysing the program")
    sites = initial.sites
    sites_by_id = {s.id: s for s in sites}
    if initial.clean:
        return FixResult("robust", initial, (), (), (), initial, count_cost((), sites), sites,
                         checks=check.count)
    if initial.failure and not initial.violations:
        return FixResult("not_fixed", initial, (), (), (), initial, count_cost((), sites), sites,
                         checks=check.count, reason=initial.failure)
    repairs: tuple[Repair, ...] = ()
    fenced_everywhere = False
    rounds: list[Round] = []
    removals: list[Removal] = []
    confirmations: list[CheckOutcome] = []
    outcome = initial
    reason = ""
    settled: set[Repair] = set()   # repairs a minimisation has tried
    method = options.method        # after a failed confirmation: the confirmation's width
    while True:
        while not outcome.clean:
            if len(rounds) == options.max_rounds:
                reason = f"violations remain after {options.max_rounds} rounds (--max-rounds)"
                break
            added: list[Repair] = []
            for report in outcome.violations:
                for candidate in candidates(report, sites_by_id):
                    if candidate not in repairs and candidate not in added:
                        added.append(candidate)
                        break
            if not added and not fenced_everywhere:
                added, fenced_everywhere = fences_everywhere(sites, repairs), True
            if not added:
                reason = "no candidate repair is left for the remaining violations"
                break
            repairs = repairs + tuple(added)
            outcome = check(repairs, f"round {len(rounds) + 1}: checking {len(repairs)} repairs",
                            method=method)
            rounds.append(Round(len(rounds) + 1, tuple(added), outcome))
            if outcome.failure and not outcome.violations:
                reason = outcome.failure
                break
        if not outcome.clean:
            return FixResult("not_fixed", initial, tuple(rounds), tuple(removals), (), outcome,
                             count_cost((), sites), sites, checks=check.count,
                             reason=reason or "violations remain",
                             confirmations=tuple(confirmations))
        final = outcome
        for repair in _sort_for_removal(repairs):
            if repair in settled:
                continue
            trial = tuple(r for r in repairs if r != repair)
            without = check(trial, f"minimising: {len(trial)} repairs", method=method)
            # a repair goes only on evidence as strong as what justified the set: when the set
            # was proved (complete exploration), a sample of schedules without it is not enough
            needed = not without.clean or (final.complete and not without.complete)
            removals.append(Removal(repair, needed, without))
            settled.add(repair)
            if not needed:
                repairs = trial
                final = without
        if final.complete or not final.explored or method is not options.method:
            break
        wide = replace(method, max_schedules=method.max_schedules * CONFIRM_FACTOR)
        outcome = check(repairs, f"confirming {len(repairs)} repairs with a wider exploration",
                        method=wide)
        confirmations.append(outcome)
        if outcome.clean:
            final = outcome
            break
        # the samples that justified the removals missed this violation: what they removed
        # comes back (tried once, never again), and every later check is as wide
        repairs = repairs + tuple(r.repair for r in removals if not r.needed and r.repair not in repairs)
        method = wide
    cost = count_cost(repairs, sites)
    plan = plan_patch(repairs, sites, options.root)
    patched = None
    if options.verify_patch and plan.new_texts and not plan.manual:
        patched = _check_patched(program, plan, check, work_dir, model_for(repairs), final.method)
    return FixResult("fixed", initial, tuple(rounds), tuple(removals), repairs, final, cost, sites,
                     plan, patched, checks=check.count, confirmations=tuple(confirmations))


def _check_patched(program: Program, plan: PatchPlan, check: _Checker, work_dir: str,
                   model: str, method: CheckMethod) -> CheckOutcome:
    """Build and check the patched sources (copies in a directory of their own; quoted
    includes still find the original directories), as widely as the repairs' last check."""
    copy_dir = tempfile.mkdtemp(prefix="patched-", dir=work_dir)
    sources: list[str] = []
    include_dirs: list[str] = []
    for source in program.sources:
        path = os.path.realpath(source)
        target = Path(copy_dir) / f"{len(sources)}" / os.path.basename(path)
        target.parent.mkdir(parents=True)
        target.write_text(plan.new_texts.get(path, Path(path).read_text(encoding="utf-8")),
                          encoding="utf-8")
        sources.append(str(target))
        if os.path.dirname(path) not in include_dirs:
            include_dirs.append(os.path.dirname(path))
    for path, text in plan.new_texts.items():  # patched headers first on the quoted path
        if path not in map(os.path.realpath, program.sources):
            header = Path(copy_dir) / "headers" / os.path.relpath(path, os.path.dirname(path))
            header.parent.mkdir(parents=True, exist_ok=True)
            header.write_text(text, encoding="utf-8")
            include_dirs.insert(0, str(header.parent))
    flags = list(program.compiler_flags)
    for directory in include_dirs:
        flags += ["-iquote", directory]
    patched = Program(tuple(sources), tuple(flags), program.args, program.cc)
    try:
        # seq_cst orders the patch wrote are checked with sc_accesses=ra, as the IR repair was
        return check((), "checking the patched program", program=patched, sc_accesses=model,
                     method=method)
    except BuildError as error:
        raise BuildError(f"the patched program does not build: {error.message}", error.details) from None


def apply_in_place(plan: PatchPlan) -> list[str]:
    """Write the patched texts over the sources, each after a FILE.orig backup; returns the
    paths written."""
    written = []
    for path, text in plan.new_texts.items():
        backup = path + ".orig"
        if os.path.exists(backup):
            raise UsageError(f"{backup} exists already: not overwriting a backup (move it away)")
        shutil.copy2(path, backup)
        Path(path).write_text(text, encoding="utf-8")
        written.append(path)
    return written



# --- rendering: the text `pyrsan fix` prints and its --json document -----------------------

def describe_repair(repair: Repair, site: SiteInfo | None) -> str:
    from .patch import describe_site
    who = f" (thread {repair.thread})" if repair.thread is not None else ""
    what = f"the {site.kind}" if site else "the access"
    if repair.kind == "fence":
        return f"seq_cst fence {repair.position} {what} at {describe_site(site)}{who}"
    return f"{what} at {describe_site(site)} made {repair.order} (was {site.order if site else '?'})"


def _report_line(report: Report) -> str:
    access = report.fields.get("access") or {}
    location = report.fields.get("location") or {}
    # a location with no name (a stack variable, thread-local or mmap memory): its address
    name = location.get("name") or location.get("address") or "?"
    return (f"{report.type} of {name} at {os.path.basename(str(access.get('file') or '?'))}:"
            f"{access.get('line', '?')} in {access.get('function') or '?'} (thread {access.get('thread', '?')})")


def _confirmation_lines(result: FixResult) -> list[str]:
    return [f"confirm: {c.description()}: " + ("clean" if c.clean else
            f"{_report_line(c.violations[0])}: back to the rounds, with the repairs removed on samples"
            if c.violations else "failed")
            for c in result.confirmations]


def render_fix_text(result: FixResult, patch_path: str | None, written: list[str]) -> str:
    out: list[str] = []
    initial = result.initial
    if result.status == "robust":
        out.append(f"pyrsan fix: no robustness violation found ({initial.description()}): nothing to fix")
        return "\n".join(out) + "\n"
    out.append(f"pyrsan fix: {plural(len(initial.violations), 'robustness violation')} "
               f"({initial.description()}):")
    out.extend(f"  {_report_line(r)}" for r in initial.violations)
    for round_ in result.rounds:
        state = ("clean" if round_.outcome.clean else
                 plural(len(round_.outcome.violations), "violation") + " left")
        out.append(f"round {round_.number}: added " + "; ".join(
            describe_repair(r, result.site(r)) for r in round_.added) + f" -> {state}")
    if result.status == "not_fixed":
        out.extend(_confirmation_lines(result))
        out.append(f"pyrsan fix: could not make the program robust: {result.reason}")
        if result.final.violations:
            out.append("remaining violations:")
            for report in result.final.violations:
                out.append(f"  {_report_line(report)}")
                suggestion = report.fields.get("suggestion")
                if suggestion:
                    out.append(f"    suggestion: {suggestion}")
        return "\n".join(out) + "\n"
    for removal in result.removals:
        outcome = removal.outcome
        verdict = ("needed: without it, " + _report_line(outcome.violations[0])
                   if outcome.violations else "not needed: removed" if not removal.needed else
                   "kept: without it, no violation in a sample of schedules, but no proof"
                   if outcome.clean else "needed")
        out.append(f"minimise: {describe_repair(removal.repair, result.site(removal.repair))}: {verdict}")
    out.extend(_confirmation_lines(result))
    cost = result.cost
    out.append(f"result: robust with {plural(cost.fences, 'fence')} added and "
               f"{plural(cost.orders, 'order')} strengthened; making every atomic access seq_cst "
               f"would change {plural(cost.all_seq_cst, 'access')}")
    out.append(f"checked: {result.final.description()}; {plural(result.checks, 'check')} in all"
               + ("" if result.final.complete else " (a sample of schedules, not a proof)"))
    plan = result.plan
    if plan is not None:
        if plan.edits:
            out.append("source changes:")
        for edit in plan.edits:
            where = f"{os.path.relpath(edit.file)}:{edit.anchor}"
            if edit.action in ("replace_order", "replace_line"):
                out.append(f"  {where}: {edit.text.strip()}")
            elif edit.action == "replace_line_and_after":
                fence = CXX_FENCE if is_cxx_source(edit.file) else C_FENCE
                out.append(f"  {where}: {edit.text.strip()} (and {fence} on the line after it: the path where "
                           "the condition is false)")
            else:
                out.append(f"  {where}: {edit.text.strip()} "
                           f"({'before' if edit.action == 'insert_before' else 'after'} this line)")
        for step in plan.manual:
            out.append(f"manual: {step.instruction} (no patch: {step.reason})")
    if plan is not None and plan.manual and result.patched_check is None:
        out.append("patched program not re-checked: the manual steps above are not in the patch")
    if result.patched_check is not None:
        patched = result.patched_check
        state = "robust" if patched.clean else plural(len(patched.violations), "violation")
        out.append(f"patched program re-checked: {state} ({patched.description()})")
    if patch_path:
        out.append(f"patch written to {patch_path} (apply with: patch -p1 < {patch_path})")
    for path in written:
        out.append(f"patched {os.path.relpath(path)} in place (backup {os.path.relpath(path)}.orig)")
    return "\n".join(out) + "\n"


def _repair_json(result: FixResult, repair: Repair) -> dict:
    site = result.site(repair)
    entry = repair.to_json()
    entry["thread"] = repair.thread
    if site is not None:
        frame = site.primary
        entry["operation"] = site.kind
        entry["order"] = repair.order if repair.kind == "order" else site.order
        entry["was"] = site.order
        if frame is not None:
            entry.update(file=frame.file, line=frame.line, column=frame.column, function=frame.function)
    if result.plan is not None:
        for edit in result.plan.edits:
            if edit.repair == repair:
                entry["source"] = {"action": edit.action, "file": edit.file, "line": edit.anchor,
                                   "text": edit.text}
        for step in result.plan.manual:
            if step.repair == repair:
                entry["manual"] = {"reason": step.reason, "instruction": step.instruction}
    return entry


def _check_json(outcome: CheckOutcome) -> dict:
    return {"scheduler": outcome.method.scheduler, "runs": outcome.runs,
            "max_runs": outcome.method.runs, "explored": outcome.explored,
            "max_schedules": outcome.method.max_schedules, "sc_accesses": outcome.sc_accesses,
            "complete": outcome.complete,
            "verdict": "clean" if outcome.clean else "violations" if outcome.violations else "error"}


def fix_json_document(result: FixResult, patch_path: str | None, written: list[str]) -> dict:
    from . import __version__
    verdict = {"robust": "clean", "fixed": "fixed", "not_fixed": "not_fixed"}[result.status]
    return {
        "verdict": verdict,
        "violations": [r.public_fields() for r in result.initial.violations],
        "rounds": [{"round": r.number, "added": [_repair_json(result, a) for a in r.added],
                    "check": _check_json(r.outcome)} for r in result.rounds],
        "repairs": [_repair_json(result, r) for r in result.repairs],
        "removed": [_repair_json(result, m.repair) for m in result.removals
                    if not m.needed and m.repair not in result.repairs],
        "cost": {"fences": result.cost.fences, "orders": result.cost.orders,
                 "all_seq_cst": result.cost.all_seq_cst},
        "check": _check_json(result.final),
        "confirmations": [_check_json(c) for c in result.confirmations],
        "checks": result.checks,
        "remaining": [r.public_fields() for r in result.final.violations]
        if result.status == "not_fixed" else [],
        "reason": result.reason,
        "patch": patch_path,
        "in_place": written,
        "patched_check": _check_json(result.patched_check) if result.patched_check else None,
        "tool": {"name": "pyrsan", "version": __version__},
    }

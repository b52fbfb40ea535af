"""Campaigns larger than one machine: units of work on a Dask cluster, and shards for CI
matrices.

A *unit* is one execution of the instrumented program: run k of a seeded campaign (seed
S + k - 1 under ``--sched random|pct``) or one schedule prefix of an exploration. A unit is
idempotent: under a controlled scheduler the same binary, environment and seed or prefix give
the same run. So a unit lost with a worker is simply run again (Dask re-submits it), and a
campaign split into N shards is the same campaign whichever machine runs which part.

``--cluster ADDRESS``: the driver builds once, ships the executable's bytes (the runtime is
linked in) and its own environment to the workers of an existing Dask scheduler, runs units
there and merges the results exactly as one machine would (reports, reproduce lines and the
JSON document). Workers need pyrsan installed and the system libraries the program links
(the same OS image as the driver: the explorer compares operations by address, so the runs
of one exploration must see identical address spaces).

``--shard K/N``: seeded campaigns take the runs k with k = K (mod N); explorations split the
schedule tree at its top: every enabled thread is a branch at each of the first levels (no
reduction there, so the union of the subtrees is the whole tree), the subtrees are numbered
in a fixed order and shard K explores those numbered K (mod N) with the usual reduction
below. `pyrsan report` merges the shards' JSON documents into one verdict.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import stat
import tempfile
import threading
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from .errors import PyrsanError, UsageError
from .explore import Exploration, dependent
from .reports import RunResult, deduplicate
from .runner import (
    ExploreOptions, RunOptions, SessionResult, _run_dir, _stops, _with_reproduction, exploration_options,
    explore_program, run_once, run_program,
)
from .schedule import Op, Trace

#: How to install the optional dependency (pyproject.toml, extra "cluster").
INSTALL_HINT = "pip install 'pyrsan[cluster]'"
#: Subtrees per shard an exploration split aims at (balance against the unreduced top).
SUBTREES_PER_SHARD = 4
#: The deepest level the top of the tree is split at.
MAX_SPLIT_DEPTH = 8
#: Run numbers of the runs that split the tree (as wide as any other: see runner._run_dir).
SPLIT_RUN_INDEX = 9_000_000


class ClusterError(PyrsanError):
    """The cluster failed under the run (scheduler gone, a unit that kept failing). Carries
    what was found before, so the reports are not lost."""

    def __init__(self, message: str, partial: SessionResult | None = None) -> None:
        super().__init__(message)
        self.partial = partial


@dataclass(frozen=True)
class Shard:
    """Part ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def takes(self, number: int) -> bool:
        """Whether unit ``number`` (1-based) belongs to this shard."""
        return (number - 1) % self.count == self.index - 1

    def public_fields(self) -> dict[str, int]:
        return {"index": self.index, "count": self.count}


def parse_shard(text: str) -> Shard:
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise UsageError(f"--shard {text}: expected K/N with 1 <= K <= N (e.g. 2/4)")
    return Shard(int(match.group(1)), int(match.group(2)))


# --- the worker side ------------------------------------------------------------------------

_materialise_lock = threading.Lock()


def _materialise(binary: bytes, digest: str) -> str:
    """The shipped executable as a file on this worker (once per binary). Its path has a
    fixed length, as the runs of an exploration must see environments of one size."""
    directory = os.path.join(tempfile.gettempdir(), f"pyrsan-cluster-{os.getuid()}", digest[:16])
    path = os.path.join(directory, "program")
    with _materialise_lock:
        if not os.path.isfile(path):
            os.makedirs(directory, exist_ok=True)
            partial = f"{path}.{os.getpid()}.part"
            with open(partial, "wb") as handle:
                handle.write(binary)
            os.chmod(partial, stat.S_IRWXU)
            os.replace(partial, path)
    return path


def run_unit(binary: bytes, digest: str, args: Sequence[str], index: int, options: RunOptions,
             environ: Mapping[str, str], pct_steps: int | None, prefix: Sequence[int] | None,
             sleep: Mapping[int, Op]) -> tuple[RunResult, Trace | None]:
    """One unit, on a worker: the run in a private directory (same path length everywhere),
    without saving reproduction files there (the driver saves them from the trace)."""
    from .runner import _disable_address_randomisation

    if prefix is not None:
        _disable_address_randomisation()
    executable = _materialise(binary, digest)
    work = tempfile.mkdtemp(prefix="pyrsan-unit-", dir=os.path.dirname(os.path.dirname(executable)))
    try:
        local = replace(options, work_dir=work, quiet=True,
                        schedule=replace(options.schedule, schedule_dir=os.path.join(work, "schedules")))
        result, trace = run_once(executable, args, index, local, pct_steps=pct_steps, prefix=prefix,
                                 environ=environ, sleep=sleep)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return replace(result, reproduction=None), trace


# --- the driver side ------------------------------------------------------------------------


class Cluster:
    """A connection to a Dask scheduler with the program shipped to its workers."""

    def __init__(self, address: str, executable: str) -> None:
        try:
            from distributed import Client
            # the driver reports cluster failures itself, in one line
            for name in ["distributed", *logging.root.manager.loggerDict]:
                if name.startswith("distributed"):
                    logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        except ImportError:
            raise UsageError(f"--cluster needs the optional dependency 'distributed': {INSTALL_HINT}") from None
        try:
            self.client = Client(address, timeout="10s", set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        self.address = address
        with open(executable, "rb") as handle:
            binary = handle.read()
        self.digest = hashlib.sha256(binary).hexdigest()
        self.binary = self.client.scatter(binary, broadcast=True, hash=False)
        self.environ = dict(os.environ)
        self.outstanding: set[Any] = set()
        self._lock = threading.Lock()

    def slots(self) -> int:
        """Units to keep in flight: every worker thread busy, plus one queued each."""
        info = self.client.scheduler_info()
        threads = sum(w.get("nthreads", 1) for w in info.get("workers", {}).values())
        return max(1, 2 * threads)

    def submit(self, args: Sequence[str], index: int, options: RunOptions, pct_steps: int | None = None,
               prefix: Sequence[int] | None = None, sleep: Mapping[int, Op] = {}) -> Any:
        future = self.client.submit(run_unit, self.binary, self.digest, tuple(args), index, options,
                                    self.environ, pct_steps, tuple(prefix) if prefix is not None else None,
                                    dict(sleep), pure=False, retries=2)
        with self._lock:
            self.outstanding.add(future)
        return future

    def result(self, future: Any, options: RunOptions, index: int,
               prefix: Sequence[int] | None) -> tuple[RunResult, Trace | None]:
        """A unit's result, with its reproduction saved here as run_once would have."""
        try:
            result, trace = future.result()
        except PyrsanError:
            raise
        except Exception as exc:  # the scheduler went away, or the unit kept failing
            raise ClusterError(self._failure(exc)) from None
        finally:
            with self._lock:
                self.outstanding.discard(future)
        if options.schedule.controlled and (result.reported or result.deadlocks or result.crashed or result.hung):
            result = _with_reproduction(result, trace, options, index, prefix is not None)
        return result, trace

    def execute(self, executable: str, args: Sequence[str], index: int, options: RunOptions,
                pct_steps: int | None = None, prefix: Sequence[int] | None = None,
                sleep: Mapping[int, Op] = {}) -> tuple[RunResult, Trace | None]:
        """run_once's signature, on the cluster (``executable`` is the shipped one)."""
        return self.result(self.submit(args, index, options, pct_steps, prefix, sleep), options, index, prefix)

    def _failure(self, exc: Exception) -> str:
        lost = "connection-lost" in str(exc) or isinstance(exc, (OSError, TimeoutError))
        if lost or self.client.status not in ("running", "connecting"):
            return f"the Dask scheduler at {self.address} went away ({type(exc).__name__})"
        return f"a unit failed on the cluster at {self.address}: {type(exc).__name__}: {exc}".splitlines()[0]

    def close(self) -> None:
        """Cancels what is still queued (Ctrl-C, a report that stops the campaign)."""
        with self._lock:
            pending = list(self.outstanding)
            self.outstanding.clear()
        try:
            if pending:
                self.client.cancel(pending, force=True)
            self.client.close(timeout=5)
        except Exception:  # closing a client whose scheduler is gone
            pass


# --- campaigns --------------------------------------------------------------------------------


def run_campaign(executable: str, args: Sequence[str], options: RunOptions, *, cluster: Cluster | None = None,
                 shard: Shard | None = None, progress: Callable[[int, int], None] | None = None) -> SessionResult:
    """``--runs N`` runs (seeded under random/pct), on the cluster and/or restricted to a
    shard. Stops at the first run that reported unless ``keep_going``, as on one machine."""
    if cluster is None and shard is None:
        return run_program(executable, args, options, progress)
    try:
        return _with_shard(_run_units(executable, args, options, cluster, shard, progress), shard)
    except ClusterError as error:
        error.partial = _with_shard(error.partial, shard) if error.partial is not None else None
        raise


def _run_units(executable: str, args: Sequence[str], options: RunOptions, cluster: Cluster | None,
               shard: Shard | None, progress: Callable[[int, int], None] | None) -> SessionResult:
    indices = [k for k in range(1, options.runs + 1) if shard is None or shard.takes(k)]
    results: list[RunResult] = []
    pct_steps = _pct_steps(executable, args, options, cluster)
    if cluster is None:
        for done, index in enumerate(indices, 1):
            if progress is not None:
                progress(done, len(indices))
            result, _ = run_once(executable, args, index, options, pct_steps=pct_steps)
            results.append(result)
            if not options.keep_going and _stops(result):
                break
        return _session(results, options)
    from distributed import as_completed

    futures = {cluster.submit(args, k, options, pct_steps): k for k in indices}
    try:
        for done, future in enumerate(as_completed(list(futures), loop=cluster.client.loop), 1):
            if progress is not None:
                progress(done, len(indices))
            result, _ = cluster.result(future, options, futures[future], None)
            results.append(result)
            if not options.keep_going and _stops(result):
                break
    except ClusterError as error:
        error.partial = _session(results, options)
        raise
    finally:
        cluster.close()
    return _session(results, options)


def _with_shard(result: SessionResult, shard: Shard | None) -> SessionResult:
    return result if shard is None else replace(result, shard=(shard.index, shard.count))


def _pct_steps(executable: str, args: Sequence[str], options: RunOptions, cluster: Cluster | None) -> int | None:
    """Under pct, run k places its change points over the step count of an earlier run: on
    one machine the previous run's, here run 1's (the same in every shard: a seeded run is
    deterministic), measured by a run that is not counted."""
    if options.schedule.sched != "pct" or options.runs < 2:
        return None
    probe = replace(options, quiet=True)
    if cluster is not None:
        _, trace = cluster.execute(executable, args, 1, probe)
    else:
        _, trace = run_once(executable, args, 1, probe)
        shutil.rmtree(_run_dir(options, 1), ignore_errors=True)
    return len(trace.steps) if trace is not None and trace.steps else None


def _session(results: list[RunResult], options: RunOptions, exploration: Exploration | None = None) -> SessionResult:
    results = sorted(results, key=lambda r: r.index)
    return SessionResult(tuple(results), deduplicate(results), options.timeout, options.schedule, exploration,
                         options.command_args)


def explore_campaign(executable: str, args: Sequence[str], options: RunOptions, explore_options: ExploreOptions,
                     *, cluster: Cluster | None = None, shard: Shard | None = None,
                     progress: Callable[[int, int], None] | None = None) -> SessionResult:
    """``--explore`` on the cluster (its units in flight instead of ``--jobs``) and/or
    restricted to a shard's subtrees."""
    found: list[RunResult] = []
    execute: Callable[..., tuple[RunResult, Trace | None]] = run_once
    if cluster is not None:
        explore_options = replace(explore_options, jobs=max(explore_options.jobs, cluster.slots()))
        remote = cluster.execute

        def execute(*args: Any, **kwargs: Any) -> tuple[RunResult, Trace | None]:
            result, trace = remote(*args, **kwargs)
            found.append(result)   # kept for the error path: the explorer's own list is lost
            return result, trace

    try:
        if shard is None:
            return explore_program(executable, args, options, explore_options, progress, execute=execute)
        return _with_shard(_explore_shard(executable, args, options, explore_options, shard, execute, progress),
                           shard)
    except ClusterError as error:
        lost = Exploration(False, len(found), "cluster lost", False)
        error.partial = _with_shard(_session(found, exploration_options(options), lost), shard)
        raise
    finally:
        if cluster is not None:
            cluster.close()


@dataclass(frozen=True)
class Subtree:
    """A subtree of the schedule tree: the decisions that lead to it and the sleep set there."""

    root: tuple[int, ...]
    sleep: Mapping[int, Op]


def split_tree(executable: str, args: Sequence[str], options: RunOptions, execute: Callable[..., Any],
               want: int) -> list[Subtree]:
    """The top of the schedule tree, breadth first, until there are ``want`` subtrees (or
    MAX_SPLIT_DEPTH levels): every enabled thread is a branch, except one whose order was
    already explored by an earlier sibling (sleep sets, FG'05: then every equivalence class is
    still in some subtree, and no two subtrees start with equivalent orders). The result's
    order is fixed (the same in every shard)."""
    options = exploration_options(options)
    level = [Subtree((), {})]
    leaves: list[Subtree] = []
    runs = 0
    for depth in range(MAX_SPLIT_DEPTH):
        if len(level) + len(leaves) >= want:
            break
        children: list[Subtree] = []
        for node in level:
            index = SPLIT_RUN_INDEX + runs
            runs += 1
            _, trace = execute(executable, args, index, options, prefix=node.root)
            shutil.rmtree(_run_dir(options, index), ignore_errors=True)
            if trace is None or len(trace.steps) <= depth or trace.diverged is not None:
                leaves.append(node)   # the program ends (or cannot follow) here
                continue
            enabled = trace.steps[depth].enabled
            earlier: dict[int, Op] = {}
            for tid in sorted(enabled):
                if tid in node.sleep:
                    continue
                op = enabled[tid]
                asleep = {t: o for t, o in {**node.sleep, **earlier}.items() if not dependent(t, o, tid, op)}
                children.append(Subtree(node.root + (tid,), asleep))
                earlier[tid] = op
        level = children
        if not level:
            break
    return leaves + level


def _explore_shard(executable: str, args: Sequence[str], options: RunOptions, explore_options: ExploreOptions,
                   shard: Shard, execute: Callable[..., Any],
                   progress: Callable[[int, int], None] | None) -> SessionResult:
    subtrees = split_tree(executable, args, options, execute, SUBTREES_PER_SHARD * shard.count)
    mine = [subtree for number, subtree in enumerate(subtrees, 1) if shard.takes(number)]
    results: list[RunResult] = []
    schedules = sleep_blocked = diverged = 0
    complete, bound, stopped = True, None, False
    budget = explore_options.max_schedules
    for subtree in mine:
        if budget <= 0:
            complete, bound = False, f"max-schedules={explore_options.max_schedules}"
            break
        part = explore_program(executable, args, options, replace(explore_options, max_schedules=budget),
                               progress, execute=execute, root=subtree.root, root_sleep=subtree.sleep,
                               first_index=schedules + 1)
        results.extend(part.runs)
        exploration = part.exploration
        assert exploration is not None
        schedules += exploration.schedules
        budget -= exploration.schedules
        sleep_blocked += exploration.sleep_blocked
        diverged += exploration.diverged
        complete = complete and exploration.complete
        bound = bound or exploration.bound
        if exploration.stopped:
            stopped, complete = True, False
            break
    return _session(results, exploration_options(options),
                    Exploration(complete, schedules, bound, stopped, sleep_blocked, diverged))


# --- a cluster on this machine (tests, benchmarks, trying a setup) ------------------------------


class LocalCluster:
    """A Dask scheduler and ``workers`` single-threaded workers on the loopback address, each
    a process of its own (started and stopped by pid, so a test can kill one)."""

    def __init__(self, workers: int, log: str | os.PathLike, timeout: float = 60) -> None:
        import socket
        import subprocess
        import sys

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.address = f"tcp://127.0.0.1:{port}"
        self.log = log

        def start(module: str, *args: str) -> subprocess.Popen:
            with open(log, "a") as out:
                return subprocess.Popen([sys.executable, "-m", module, *args], stdout=out, stderr=out,
                                        start_new_session=True)

        self.scheduler = start("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--dashboard-address", ":0")
        self.workers = [start("distributed.cli.dask_worker", self.address, "--nthreads", "1", "--host",
                              "127.0.0.1", "--dashboard-address", ":0", "--no-nanny") for _ in range(workers)]
        self.wait_for_workers(workers, timeout)

    def wait_for_workers(self, count: int, timeout: float) -> None:
        import time

        from distributed import Client

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with Client(self.address, timeout="5s") as client:
                    if len(client.scheduler_info()["workers"]) >= count:
                        return
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the local Dask cluster did not start (log: {self.log})")

    @staticmethod
    def kill(proc: Any) -> None:
        import signal

        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()

    def stop(self) -> None:
        for proc in self.workers + [self.scheduler]:
            self.kill(proc)

"""The fork server of ``--explore`` (docs/scheduling.md, "Fork server"): the program is started
once with ``fork_server=FD`` and stops at its first scheduling point; each schedule is then a
forked child of that process instead of a new process (no exec, no dynamic loading, no
start-up of the program and the runtime). ``ForkServer.execute`` has the signature of
``runner.run_once`` and returns the same RunResult and trace.

One server runs one schedule at a time (its runs' files are told apart by order: every report
file that appears during a run is that run's, including those of processes the run forks);
``ForkServers`` keeps one per exploration thread. A program that never reaches a scheduling
point (or a server that fails to start) makes ``ForkServers`` fall back to ``run_once``.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Mapping, Sequence

from .reports import RunResult, read_report_file
from .schedule import Op, Trace, format_schedule, known_steps
from .watchdog import Watchdog

#: How long the server may take to reach its first scheduling point (process start-up).
READY_TIMEOUT = 60.0
#: The longest schedule text a "sched N" request carries (the runtime's
#: RSAN_FORK_SERVER_SCHEDULE_MAX); a longer one goes in a file ("run PATH").
SCHEDULE_MAX = 65536


def server_environment(env: dict[str, str]) -> None:
    """What the server's process is started with beside the runtime options (docs/scheduling.md,
    "Fork server"): work that every child would redo is done once in the server, or not at all.
    ``LD_BIND_NOW``: the dynamic loader binds every symbol at start-up, in the server, where
    each child would bind lazily at its first call after the fork point (the loader's lookup,
    and a copy of the page of the binding table it writes). ``glibc.pthread.rseq=0``:
    no restartable-sequence area is registered for the threads, which the kernel would update
    at every switch to one (a copy of a page of each new thread's TLS in every child).
    Neither changes what the program computes, nor where anything is in memory: a run that
    falls back to a process of its own (``ForkServers``) sees the addresses the server's runs
    see, which the explorer compares across runs. (One malloc arena for every thread would save
    each child an arena's mappings, but a thread's blocks would then lie elsewhere than in such
    a run.) A value the user set stays."""
    env.setdefault("LD_BIND_NOW", "1")
    tunables = [t for t in env.get("GLIBC_TUNABLES", "").split(":") if t]
    if not any(t.split("=")[0] == "glibc.pthread.rseq" for t in tunables):
        tunables.append("glibc.pthread.rseq=0")
    env["GLIBC_TUNABLES"] = ":".join(tunables)


class ForkServerError(Exception):
    """The server did not start or went away: the caller falls back to one process per run."""


class ForkServer:
    def __init__(self, executable: str, args: Sequence[str], options, directory: Path) -> None:
        from .runner import runtime_options   # runner imports this module lazily

        self.options = options
        self.directory = directory
        self.dirname = str(directory)
        directory.mkdir(parents=True, exist_ok=True)
        ours, theirs = socket.socketpair()
        scheduler = {"sched": "dfs", "seed": "0", "trace_path": str(directory / "trace.%p.jsonl"),
                     "stall_ms": str(options.stall_ms), "fork_server": str(theirs.fileno())}
        if options.closure is not None:
            scheduler["sched_closure"] = options.closure
        env = dict(os.environ)
        env["PYRSAN_OPTIONS"] = runtime_options(env.get("PYRSAN_OPTIONS", ""), str(directory / "reports.%p.jsonl"),
                                                options.sc_accesses, scheduler)
        server_environment(env)
        output = subprocess.DEVNULL if options.quiet else None
        try:
            self.proc = subprocess.Popen([executable, *args], env=env, start_new_session=True,
                                         pass_fds=(theirs.fileno(),), stdin=output, stdout=output, stderr=output)
        except OSError as exc:
            raise ForkServerError(f"cannot start {executable}: {exc.strerror or exc}") from None
        finally:
            theirs.close()
        self.sock = ours
        self.runs = 0
        self.pending = b""   # what the server wrote past the last line read
        if self._line(READY_TIMEOUT) != "ready":
            self.close()
            raise ForkServerError("the program reached no scheduling point")

    def _line(self, timeout: float | None) -> str | None:
        """The server's next line; None when none came within ``timeout`` seconds (a later
        call goes on reading it), "" at the end of the socket."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                readable, _, _ = select.select([self.sock], [], [], left)
                if not readable:
                    return None
                data = self.sock.recv(4096)
            except OSError:
                return ""
            if not data:
                return ""
            self.pending += data
        line, _, self.pending = self.pending.partition(b"\n")
        return line.decode("ascii", "replace").strip()

    def execute(self, executable: str, args: Sequence[str], index: int, options, prefix: Sequence[int] = (),
                sleep: Mapping[int, Op] = {}, **_: object) -> tuple[RunResult, Trace | None]:
        """runner.run_once for one schedule prefix, as a child of the server."""
        from .runner import EXIT_RUNTIME_BOUND, EXIT_RUNTIME_FATAL, _read_trace, _with_reproduction

        self.runs += 1
        text = format_schedule(tuple(prefix), sleep=sleep, trace_from=len(known_steps(prefix))).encode()
        schedule = None
        if len(text) <= SCHEDULE_MAX:
            # the schedule in the request: no file to write, read and remove per run
            request = b"sched %d\n" % len(text) + text
        else:
            # A new file each run: rewriting one in place makes ext4 flush it at close (its
            # replace-by-truncate heuristic), 1-5 ms of wall time per schedule.
            schedule = f"{self.dirname}/prefix.{self.runs}.sched"   # strings: no pathlib per run
            with open(schedule, "wb") as handle:   # the directory is the server's
                handle.write(text)
            request = f"run {schedule}\n".encode()
        try:
            self.sock.sendall(request)
        except OSError:
            raise ForkServerError("the fork server went away") from None
        answer = (self._line(READY_TIMEOUT) or "").split()
        if len(answer) != 2 or answer[0] != "pid":
            raise ForkServerError("the fork server went away")
        pid = int(answer[1])
        trace_path = f"{self.dirname}/trace.{pid}.jsonl"
        watchdog = Watchdog(self.options.timeout, trace_path)   # type: ignore[arg-type]
        killed = None   # why the driver killed the run: "timeout", "handover" (watchdog.py)
        while (line := self._line(watchdog.wait())) is None:
            killed = watchdog.expired()
            if killed is not None:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                line = self._line(READY_TIMEOUT) or ""
                break
        answer = line.split()
        if len(answer) != 2 or answer[0] != "status":
            raise ForkServerError("the fork server went away")
        status = int(answer[1])
        returncode = os.waitstatus_to_exitcode(status)
        sig = None
        timed_out, cut = killed == "timeout", killed == "handover"
        if returncode < 0 and not timed_out and not cut:
            try:
                sig = signal.Signals(-returncode).name
            except ValueError:
                sig = f"signal {-returncode}"
        if returncode == EXIT_RUNTIME_FATAL:
            sig = f"a pyrsan runtime fatal error (exit status {EXIT_RUNTIME_FATAL}, see the line above)"
        trace = _read_trace(trace_path, known_steps(prefix))
        # every report file in the directory is this run's (its processes', %p); one listing
        written: list[str] = sorted(entry.path for entry in os.scandir(self.dirname)
                                    if entry.name.startswith("reports") and entry.name.endswith(".jsonl"))
        reports = tuple(report for path in written for report in read_report_file(path))
        for path in [trace_path, *written] if schedule is None else [schedule, trace_path, *written]:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        bound = (trace is not None and trace.end == "bound") or returncode == EXIT_RUNTIME_BOUND
        result = RunResult(index=index, returncode=None if timed_out or cut else returncode, signal=sig,
                           timed_out=timed_out, reports=reports, reached_bound=bound)
        if (reports and (result.reported or result.deadlocks)) or result.crashed or result.hung:
            result = _with_reproduction(result, trace, options, index, True)
        return result, trace

    def close(self) -> None:
        """The end of the socket ends the server (it exits 0)."""
        try:
            self.sock.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def run_directory(work_dir: Path) -> Path:
    """Where a server's runs write their traces and reports, which the driver reads and deletes
    after each run: a fresh directory in /dev/shm (tmpfs) when there is one. On a disk file
    system, creating and removing those small files cost the runs most of their kernel time
    (ext4 metadata lookups: about half of a child's CPU in `perf`). ``work_dir`` otherwise."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK):
        try:
            return Path(tempfile.mkdtemp(prefix="pyrsan-explore-", dir=shm))
        except OSError:
            pass
    return work_dir


class ForkServers:
    """One fork server per exploration thread; ``run_once`` when a server cannot be had."""

    def __init__(self, executable: str, args: Sequence[str], options, work_dir: Path) -> None:
        self.executable, self.args, self.options, self.work_dir = executable, list(args), options, work_dir
        self.local = threading.local()
        self.servers: list[ForkServer] = []
        self.lock = threading.Lock()
        self.failed = False
        self.temporary: list[Path] = []   # directories of run_directory's, removed at close

    def _server(self) -> ForkServer | None:
        server = getattr(self.local, "server", None)
        if server is None and not self.failed:
            with self.lock:
                parent = run_directory(self.work_dir)
                if parent != self.work_dir:
                    self.temporary.append(parent)
                directory = parent / f"forkserver{len(self.servers)}"
                try:
                    server = ForkServer(self.executable, self.args, self.options, directory)
                except ForkServerError:
                    self.failed = True
                    return None
                self.servers.append(server)
            self.local.server = server
        return server

    def execute(self, executable: str, args: Sequence[str], index: int, options, **kwargs):
        from .runner import run_once

        server = self._server()
        if server is not None:
            try:
                return server.execute(executable, args, index, options, **kwargs)
            except ForkServerError:
                self.failed = True
        return run_once(executable, args, index, options, **kwargs)

    def close(self) -> None:
        for server in self.servers:
            server.close()
        for directory in self.temporary:
            shutil.rmtree(directory, ignore_errors=True)

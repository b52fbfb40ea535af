"""The per-schedule watchdog of a controlled run (docs/scheduling.md "Hand-over", "Fork server").

A run ends at ``--timeout`` when one is given. Without one, a controlled run cannot hang on
its own: the scheduler reports a deadlock and stops at its step bound. Once the runtime has
handed the run over to the OS scheduler (trace end line ``"end": "handover"``), that no
longer holds: the threads may deadlock for real (a thread blocked in a call the scheduler
cannot see, which is what made the run stall, while another joins it). The driver then gives
the run ``HANDOVER_GRACE`` seconds to end and kills it after that. The run is not a hang of the
program (nothing says the program hangs without the scheduler): its trace already says
"handover", so the exploration counts it as not explored past the stall (incomplete), and the
reports it raised are kept.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

#: How long a run may go on after the hand-over (seconds) when no --timeout is given.
HANDOVER_GRACE = 10.0
#: How often the driver looks at the trace while a run goes on (seconds).
POLL = 0.25


def handed_over(trace_path: Path) -> bool:
    """Whether the trace ends with the hand-over line (it is the last line the runtime writes)."""
    try:
        with open(trace_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 512))
            tail = f.read()
    except OSError:
        return False
    lines = tail.rstrip(b"\n").rsplit(b"\n", 1)
    return b'"end": "handover"' in lines[-1] or b'"end":"handover"' in lines[-1]


class Watchdog:
    """The deadline of one run: ``timeout`` after its start (None: none), and HANDOVER_GRACE
    after its trace says it was handed over. ``wait`` is how long to wait before asking again;
    ``expired`` says why the run must be killed now ("timeout", "handover") or None."""

    def __init__(self, timeout: float | None, trace_path: Path | None) -> None:
        self.start = time.monotonic()
        self.timeout = timeout
        self.trace_path = trace_path
        self.handover_at: float | None = None

    def wait(self) -> float:
        if self.trace_path is None:
            return self.timeout if self.timeout is not None else 3600.0
        return POLL

    def expired(self) -> str | None:
        now = time.monotonic()
        if self.timeout is not None and now - self.start >= self.timeout:
            return "timeout"
        if self.trace_path is not None:
            if self.handover_at is None and handed_over(self.trace_path):
                self.handover_at = now
            if self.handover_at is not None and now - self.handover_at >= HANDOVER_GRACE:
                return "handover"
        return None

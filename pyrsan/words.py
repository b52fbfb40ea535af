"""Words of the driver's messages that several commands use."""
from __future__ import annotations

import signal


def plural(count: int, word: str) -> str:
    """`1 run`, `2 runs`, `3 accesses`."""
    return f"{count} {word}{'' if count == 1 else 'es' if word.endswith('s') else 's'}"


def signal_name(returncode: int) -> str:
    """The name of the signal that ended a process (subprocess's negative returncode)."""
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"

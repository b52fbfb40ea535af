"""What the explorer's race scan needs of waits enabled by memory (docs/design/exploration.md §23).

Under ``sched_wait_value=1`` (the default of ``sched=dfs``) a wait or recognised spin load is a
thread's pending operation only while memory lets it through (runtime/src/sched_wait.c), so a
thread may be created waiting: its first operation is then not among the enabled threads of the
step after its spawn, and the scan cannot learn from that step which spawn made it. The spawn's
trace address names the child (docs/scheduling.md, "Kinds in the trace"), which every step of
the child happens after, however long it waits first.
"""

from __future__ import annotations

from .schedule import Op


def note_spawn(spawned_by: dict[int, int], op: Op, index: int) -> None:
    """Record step ``index``, a spawn, as the step that made the thread its address names."""
    try:
        child = int(op.addr, 16)
    except ValueError:
        return
    spawned_by.setdefault(child, index)

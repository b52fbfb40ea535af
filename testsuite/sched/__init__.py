"""Schedule control: DPOR core, schedule/trace files, and the --sched/--replay/--explore CLI."""

"""instrument_ir: parse the IR text once, run the passes, print it (docs/interfaces.md §1)."""
from __future__ import annotations

from .annotations import annotation_sites
from .asm import rewrite_asm
from .atomics import rewrite_atomics
from .awaitloops import enabled_by_default as await_loops_on, mark_await_loops
from .calls import shadow_call_stack
from .codegen import optimise_ir
from .debuginfo import DebugInfo
from .inline_o0 import inline_atomic_helpers, mark_atomic_accessors
from .inlined import resite_inlined_hooks
from .model import parse_module, print_module
from .plain import instrument_plain_accesses
from .registration import declare_used, emit_registration
from .repairs import IRRepair, insert_repairs, number_repair_fences
from .results import InstrumentResult, UnsupportedIRError
from .sites import SiteTable
from .spinloops import enabled_by_default


def instrument_ir(ir_text: str, module_id: str, spin_loops: bool | None = None,
                  repairs: list[IRRepair] | None = None,
                  plain_accesses: bool = True, optimise: int = 0,
                  optimiser: str | None = None) -> InstrumentResult:
    """spin_loops: recognise spin loops (spinloops.py); None: on unless $PYRSAN_NO_SPIN_LOOPS.
    repairs: fences and orders of `pyrsan fix` (repairs.py); the program's sites keep
    the numbers they have without them, the repair fences come after.
    plain_accesses: instrument non-atomic accesses for race detection (plain.py).
    optimise: 1-3 when ir_text is clang's unoptimised output (`-Xclang -disable-llvm-passes`):
    plain accesses are instrumented first, so the hooks of accesses that the optimiser
    deletes (a dead racy read) stay, then LLVM's -O<optimise> pipeline runs, then the atomics
    are instrumented as in optimised IR (their spin-loop recognition expects it).
    optimiser: the clang that runs that pipeline (codegen.optimise_ir); None: llvmlite."""
    if spin_loops is None:
        spin_loops = enabled_by_default()
    module = parse_module(ir_text)
    if any(line.startswith("@__rsan.module = ") for line in module.top_level_lines()):
        raise UnsupportedIRError("module that is already instrumented (@__rsan.module)")
    debug = DebugInfo(module.top_level_lines())
    table = SiteTable(module_id, debug)
    if plain_accesses:
        # first: its escape check reads the atomics as they are (a rewritten atomic is a
        # call, which would count as an escape of its pointer)
        module, _ = instrument_plain_accesses(module, table)
    if optimise:
        if spin_loops:     # header accessors inlined whole, hooks or not (inline_o0.py)
            mark_atomic_accessors(module)
        module = parse_module(optimise_ir(declare_used(module), optimise, optimiser))
        debug = table.debug = DebugInfo(module.top_level_lines())
        resite_inlined_hooks(module, table)   # the inlined callers' frames (inlined.py)
    elif spin_loops:   # -O0: accessors inlined, as the optimiser would have (inline_o0.py)
        inlined = inline_atomic_helpers(module)
        if inlined is not None:
            module = inlined
            debug = table.debug = DebugInfo(module.top_level_lines())
            resite_inlined_hooks(module, table)
    insert_repairs(module, table, module_id, repairs or [], spin_loops)
    loops: list = []
    libcall_notes: list = []
    table.primitives.prepare(module, debug)   # before the atomics become calls (primitives.py)
    module, _ = rewrite_atomics(module, table, spin_loops, loops, libcall_notes)
    if spin_loops and await_loops_on():   # after the spin loops: the loops they left (awaitloops.py)
        module = mark_await_loops(module, module_id)
    module, _ = annotation_sites(module, table)
    asm_notes = rewrite_asm(module, table)
    number_repair_fences(module, table)  # after every site of the program's own
    module, _ = shadow_call_stack(module, table)
    module = emit_registration(module, table, debug, module_id)
    loops.sort(key=lambda loop: (loop.file, loop.line))
    return InstrumentResult(print_module(module), tuple(table.sites), tuple(loops),
                            tuple(libcall_notes) + tuple(asm_notes))

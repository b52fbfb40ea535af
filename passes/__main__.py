"""python -m pyrsan.passes INPUT.bc -o OUTPUT.o --module-id ID [--emit-ll OUT.ll] [--codegen-opt N]
    [--no-spin-loops] [--no-plain-accesses] [--optimise N [--optimiser CLANG]] [--list-loops] [--list-notes]
    [--repairs FILE.json] [--sites-json FILE.json]

Exit 0 on success, 2 with one `error: ...` line for unsupported IR or unreadable input.
--list-loops prints one line per recognised spin / CAS retry loop on stdout
(RecognisedLoop.describe(): `spin loop at f.c:12 (wait for f == 1)`); --list-notes one line per
inline asm statement modelled (`note: ...`), and per asm statement or atomic library call left
as it is (`warning: ...`)."""
from __future__ import annotations

import argparse
import sys

from .codegen import OptimiserError, emit_object, read_ir
from .instrument import instrument_ir
from .repairs import RepairError, load_repairs
from .results import UnsupportedIRError
from .sitesjson import write_sites_json


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pyrsan.passes",
                                     description="Instrument LLVM IR for the pyrsan runtime.")
    parser.add_argument("input", help="LLVM bitcode (.bc) or text IR (.ll)")
    parser.add_argument("-o", "--output", required=True, help="object file to write")
    parser.add_argument("--module-id", required=True,
                        help="string unique per translation unit (site id prefix)")
    parser.add_argument("--emit-ll", help="also write the instrumented IR text here")
    # Default 0: clang already optimised the IR at the user's -O level; LLVM's -O2 codegen
    # doubles the instrumented build time (benchmarks/build_time.py) for little run-time gain,
    # since the runtime hooks dominate an instrumented program's time.
    parser.add_argument("--codegen-opt", type=int, default=0, choices=(0, 1, 2, 3),
                        help="codegen optimisation level (default 0)")
    parser.add_argument("--optimise", type=int, default=0, choices=(0, 1, 2, 3),
                        help="INPUT is unoptimised (clang -Xclang -disable-llvm-passes): instrument "
                             "the plain accesses, run LLVM's -O<N> pipeline, then instrument the atomics")
    parser.add_argument("--optimiser", metavar="CLANG",
                        help="with --optimise: the clang (same LLVM major as llvmlite) that runs the "
                             "pipeline and the back end (default: llvmlite, slower)")
    parser.add_argument("--no-spin-loops", action="store_true",
                        help="do not treat spin loops on one atomic location as waits")
    parser.add_argument("--no-plain-accesses", action="store_true",
                        help="do not instrument non-atomic accesses (no race detection)")
    parser.add_argument("--repairs", metavar="FILE.json",
                        help="fences to insert and orders to strengthen (pyrsan fix; passes/repairs.py)")
    parser.add_argument("--sites-json", metavar="FILE.json",
                        help="also write the module's site table as JSON (pyrsan fix)")
    parser.add_argument("--list-loops", action="store_true",
                        help="print the recognised spin and CAS retry loops on stdout")
    parser.add_argument("--list-notes", action="store_true",
                        help="print one line per inline asm statement modelled (`note: ...`) or "
                             "asm / atomic library call not modelled (`warning: ...`) on stdout")
    args = parser.parse_args(argv)
    try:
        repairs = load_repairs(args.repairs) if args.repairs else []
    except RepairError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    try:
        text = read_ir(args.input, as_printed=bool(args.optimise and args.optimiser))
    except OSError as e:
        print("error: cannot read %s: %s" % (args.input, e.strerror), file=sys.stderr)
        return 2
    except RuntimeError as e:
        first = str(e).strip().splitlines()
        print("error: cannot parse %s: %s" % (args.input, " ".join(first[:2])), file=sys.stderr)
        return 2
    try:
        result = instrument_ir(text, args.module_id,
                               spin_loops=False if args.no_spin_loops else None,
                               repairs=repairs,
                               plain_accesses=not args.no_plain_accesses,
                               optimise=0 if args.no_plain_accesses else args.optimise,
                               optimiser=args.optimiser)
    except (UnsupportedIRError, RepairError, OptimiserError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    if args.list_loops:
        for loop in result.loops:
            print(loop.describe())
    if args.list_notes:
        for note in result.asm:
            print("%s: %s" % ("warning" if note.warn else "note", note.describe()))
    if args.emit_ll:
        with open(args.emit_ll, "w") as f:
            f.write(result.ir_text)
    if args.sites_json:
        write_sites_json(args.sites_json, args.module_id, result.sites)
    try:
        emit_object(result.ir_text, args.output, args.codegen_opt,
                    args.optimiser if args.optimise and not args.no_plain_accesses else None)
    except OptimiserError as e:  # IR the passes wrote: an internal error, not bad input
        print("internal error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

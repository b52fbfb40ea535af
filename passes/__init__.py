"""pyrsan.passes: the instrumentation of LLVM IR for the pyrsan runtime.

    result = instrument_ir(str(llvm_module), "/abs/path/app.c")   # -> InstrumentResult
    emit_object(result.ir_text, "app.rsan.o", opt=2)

or, as the driver does (in a subprocess, since llvmlite aborts on LLVM assertions):

    python -m pyrsan.passes app.bc -o app.rsan.o --module-id /abs/path/app.c [--emit-ll x.ll]

Layout: syntax (the shared IR regexes), model (the module -> functions -> lines model), debuginfo
(frames from !DILocation), sites (site ids and rows), layout (type sizes from the data layout),
escape (private stack slots, the object a pointer comes from), the passes plain (non-atomic
accesses, for races), atomics (with spinloops: spin and CAS retry loops as wait / BCAS),
annotations (site ids of pyrsan.h's runtime calls), calls (shadow call stack) and registration
(site table, globals, module constructor), repairs (the IR repairs of `pyrsan fix`), sitesjson
(the site table as JSON), instrument (the pipeline), codegen (reading IR files, emitting objects).
"""
from .codegen import emit_object
from .instrument import instrument_ir
from .results import Frame, InstrumentResult, RecognisedLoop, Site, UnsupportedIRError

__all__ = ["instrument_ir", "emit_object", "InstrumentResult", "Site", "Frame",
           "RecognisedLoop", "UnsupportedIRError"]

"""pyrsan.passes: the instrumentation of LLVM IR for the pyrsan runtime."""
from .codegen import emit_object
from .instrument import instrument_ir
from .results import Frame, InstrumentResult, Site, UnsupportedIRError

__all__ = ["instrument_ir", "emit_object", "InstrumentResult", "Site", "Frame",
           "UnsupportedIRError"]

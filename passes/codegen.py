"""Reading IR files and emitting objects with llvmlite (toolchain.md §3.3)."""
from __future__ import annotations

import llvmlite.binding as llvm

_initialized = False


def _init() -> None:
    global _initialized
    if not _initialized:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        # Inline asm (`pause`, `lock cmpxchg`) is assembled by the object streamer, which
        # needs the target's asm parser: without it LLVM aborts the process.
        llvm.initialize_native_asmparser()
        _initialized = True


def read_ir(path: str) -> str:
    """The text of a .bc or .ll file as printed by llvmlite (one canonical LLVM-22 syntax)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] in (b"BC\xc0\xde", b"\xde\xc0\x17\x0b"):
        module = llvm.parse_bitcode(data)
    else:
        module = llvm.parse_assembly(data.decode("utf-8"))
    module.verify()
    return str(module)


def emit_object(ir_text: str, path: str, opt: int = 0) -> None:
    """Parse and verify ir_text, then write a position-independent object file to path."""
    _init()
    module = llvm.parse_assembly(ir_text)
    module.verify()
    target = llvm.Target.from_triple(module.triple or llvm.get_default_triple())
    machine = target.create_target_machine(opt=opt, reloc="pic", codemodel="default")
    data = machine.emit_object(module)
    with open(path, "wb") as f:
        f.write(data)

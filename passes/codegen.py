"""Reading IR files and emitting objects with llvmlite (toolchain.md §3.3)."""
from __future__ import annotations

import subprocess

import llvmlite.binding as llvm


class OptimiserError(RuntimeError):
    """clang failed on IR the passes wrote (a pyrsan bug, or a clang that cannot read it)."""


def _run_clang(clang: str, args: list[str], ir_text: str, output: str = "-") -> bytes:
    """clang ARGS on ir_text (standard input); its standard output."""
    proc = subprocess.run([clang, *args, "-x", "ir", "-", "-o", output], input=ir_text.encode("utf-8"),
                          capture_output=True, check=False)
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise OptimiserError("%s %s failed on the instrumented IR: %s" % (
            clang, " ".join(args), lines[0] if lines else "exit status %d" % proc.returncode))
    return proc.stdout

_initialized = False


def init_llvm() -> None:
    global _initialized
    if not _initialized:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        # Inline asm (`pause`, `lock cmpxchg`) is assembled by the object streamer, which
        # needs the target's asm parser: without it LLVM aborts the process.
        llvm.initialize_native_asmparser()
        _initialized = True


def read_ir(path: str, as_printed: bool = False) -> str:
    """The text of a .bc or .ll file as printed by llvmlite (one canonical LLVM-22 syntax).
    as_printed: a .ll file printed by LLVM of llvmlite's major (clang -S) is that text already
    and is returned as it is (no parse: the passes' inputs at -O1 are large unoptimised IR)."""
    with open(path, "rb") as f:
        data = f.read()
    if as_printed and data[:4] not in (b"BC\xc0\xde", b"\xde\xc0\x17\x0b"):
        return data.decode("utf-8")
    if data[:4] in (b"BC\xc0\xde", b"\xde\xc0\x17\x0b"):
        module = llvm.parse_bitcode(data)
    else:
        module = llvm.parse_assembly(data.decode("utf-8"))
    module.verify()
    return str(module)


def optimise_ir(ir_text: str, speed_level: int, clang: str | None = None) -> str:
    """ir_text after LLVM's default pipeline at -O<speed_level> (1-3). With clang (whose LLVM
    major must be llvmlite's, so that it reads llvmlite's IR text): `clang -O<n>` on the IR,
    the pipeline clang runs on C (a release build: much faster than llvmlite's, which has
    LLVM's assertions on). Otherwise llvmlite's pass builder with clang's tuning (loop
    unrolling and vectorisation from -O2 on). Used when the plain accesses were instrumented
    before optimisation (README "Optimisation and races")."""
    if clang:  # same LLVM major: clang prints the IR text llvmlite would
        return _run_clang(clang, ["-O%d" % speed_level, "-S", "-emit-llvm"], ir_text).decode("utf-8")
    init_llvm()
    module = llvm.parse_assembly(ir_text)
    module.verify()
    target = llvm.Target.from_triple(module.triple or llvm.get_default_triple())
    machine = target.create_target_machine(opt=speed_level, reloc="pic", codemodel="default")
    tuning = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    tuning.loop_unrolling = tuning.loop_interleaving = speed_level >= 2
    tuning.loop_vectorization = tuning.slp_vectorization = speed_level >= 2
    builder = llvm.create_pass_builder(machine, tuning)
    builder.getModulePassManager().run(module, builder)
    return str(module)


def emit_object(ir_text: str, path: str, opt: int = 0, clang: str | None = None) -> None:
    """Parse and verify ir_text, then write a position-independent object file to path (with
    clang of llvmlite's LLVM major when given: its back end, a release build, is faster than
    llvmlite's; the relocation model comes from the module's PIC/PIE flags)."""
    if clang:
        _run_clang(clang, ["-O%d" % opt, "-Xclang", "-disable-llvm-passes", "-c"], ir_text, path)
        return
    init_llvm()
    module = llvm.parse_assembly(ir_text)
    module.verify()
    target = llvm.Target.from_triple(module.triple or llvm.get_default_triple())
    machine = target.create_target_machine(opt=opt, reloc="pic", codemodel="default")
    data = machine.emit_object(module)
    with open(path, "wb") as f:
        f.write(data)

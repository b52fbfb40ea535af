"""The runtime functions the passes call (runtime/include/rsan_interface.h), as IR declarations."""
from __future__ import annotations

from pyrsan.abi import ABI_VERSION

__all__ = ["ABI_VERSION", "DECLARATIONS", "FRAME_TYPE", "SITE_TYPE", "GLOBAL_TYPE", "MODULE_TYPE"]

DECLARATIONS = {
    "__rsan_fence": "declare void @__rsan_fence(i32, i32, i64)",
    "__rsan_fence_spin": "declare void @__rsan_fence_spin(i32, i64)",
    "__rsan_func_entry": "declare void @__rsan_func_entry(i64)",
    "__rsan_func_exit": "declare void @__rsan_func_exit()",
    "__rsan_register_module": "declare void @__rsan_register_module(ptr)",
    "__rsan_asm_begin": "declare void @__rsan_asm_begin(ptr, i32, i32, i64)",
    "__rsan_asm_end": "declare void @__rsan_asm_end()",
    "__rsan_await_head": "declare void @__rsan_await_head(i64, i32, i64, i64, i64)",
}
for _n in (1, 2, 4, 8):
    DECLARATIONS["__rsan_load_%d" % _n] = "declare i64 @__rsan_load_%d(ptr, i32, i64)" % _n
    DECLARATIONS["__rsan_store_%d" % _n] = "declare void @__rsan_store_%d(ptr, i64, i32, i64)" % _n
    DECLARATIONS["__rsan_rmw_%d" % _n] = "declare i64 @__rsan_rmw_%d(ptr, i64, i32, i32, i64)" % _n
    DECLARATIONS["__rsan_spin_load_%d" % _n] = (
        "declare i64 @__rsan_spin_load_%d(ptr, i64, i32, i64)" % _n)
    DECLARATIONS["__rsan_spin_load_ne_%d" % _n] = (
        "declare i64 @__rsan_spin_load_ne_%d(ptr, i64, i32, i64)" % _n)
    DECLARATIONS["__rsan_spin_load_mask_%d" % _n] = (
        "declare i64 @__rsan_spin_load_mask_%d(ptr, i64, i64, i32, i64)" % _n)
    DECLARATIONS["__rsan_spin_load_mask_ne_%d" % _n] = (
        "declare i64 @__rsan_spin_load_mask_ne_%d(ptr, i64, i64, i32, i64)" % _n)
    DECLARATIONS["__rsan_bcas_%d" % _n] = (
        "declare void @__rsan_bcas_%d(ptr, i64, i64, i32, i64)" % _n)
    DECLARATIONS["__rsan_casloop_load_%d" % _n] = (
        "declare i64 @__rsan_casloop_load_%d(ptr, i32, i64)" % _n)
    DECLARATIONS["__rsan_casloop_cas_%d" % _n] = (
        "declare { i64, i64 } @__rsan_casloop_cas_%d(ptr, i64, i64, i32, i32, i32, i64)" % _n)
    DECLARATIONS["__rsan_cas_%d" % _n] = (
        "declare { i64, i64 } @__rsan_cas_%d(ptr, i64, i64, i32, i32, i32, i64)" % _n)

# The plain-access hooks touch only the runtime's memory (shadow cells, thread state), never
# the program's, and never unwind: so the optimiser keeps each call where it is (it writes
# memory) but may still keep program values in registers across it (plain accesses are
# instrumented before optimisation, instrument.py). They may end the process (halt_on_error),
# hence no `willreturn`.
_PLAIN_HOOK = "nounwind memory(inaccessiblemem: readwrite)"
for _n in (1, 2, 4, 8, 16):
    for _kind in ("read", "write"):
        DECLARATIONS["__rsan_%s_%d" % (_kind, _n)] = "declare void @__rsan_%s_%d(ptr captures(none), i64) %s" % (
            _kind, _n, _PLAIN_HOOK)
DECLARATIONS["__rsan_volatile_load"] = "declare void @__rsan_volatile_load(ptr, i64) nounwind"
DECLARATIONS["__rsan_volatile_store"] = "declare void @__rsan_volatile_store(ptr) nounwind"
DECLARATIONS["__rsan_read_range"] = "declare void @__rsan_read_range(ptr captures(none), i64, i64) " + _PLAIN_HOOK
DECLARATIONS["__rsan_write_range"] = "declare void @__rsan_write_range(ptr captures(none), i64, i64) " + _PLAIN_HOOK
# 16-byte atomics (passes/wide.py, runtime/src/atomic16.c): i128 as (lo, hi) i64 halves
DECLARATIONS["__rsan_load_16"] = "declare { i64, i64 } @__rsan_load_16(ptr, i32, i64)"
DECLARATIONS["__rsan_store_16"] = "declare void @__rsan_store_16(ptr, i64, i64, i32, i64)"
DECLARATIONS["__rsan_rmw_16"] = "declare { i64, i64 } @__rsan_rmw_16(ptr, i64, i64, i32, i32, i64)"
DECLARATIONS["__rsan_cas_16"] = (
    "declare { i64, i64 } @__rsan_cas_16(ptr, i64, i64, i64, i64, i32, i32, i32, i64)")

# IR types of the structs of rsan_interface.h
FRAME_TYPE = "{ ptr, ptr, i32, i32 }"
SITE_TYPE = "{ i32, i32, i32, i32, i32, i32, ptr }"
GLOBAL_TYPE = "{ ptr, i64, ptr }"
MODULE_TYPE = "{ i32, i32, i32, i32, i64, ptr, ptr, ptr }"

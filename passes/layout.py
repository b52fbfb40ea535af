"""Sizes of IR types from the module's data layout, without llvmlite (toolchain.md §3.2: the
text path; parsing the module again with llvmlite just for sizes costs more than the rewrite).

    layout = TypeLayout(module.top_level_lines())
    layout.store_size("{ i64, i32, [5 x i8] }")   # -> 24 (bytes an access of this type touches)

Rules of LLVM's DataLayout (LangRef "Data Layout"): store size = ceil(bits / 8); alloc size =
store size rounded up to the ABI alignment; structs lay out their fields each at its alignment
(packed `<{ }>`: alignment 1) and end on the struct's alignment; arrays are N alloc sizes.
"""
from __future__ import annotations

import re

from .syntax import NAMED_TYPE_RE, read_type, split_top_level

# LLVM's default alignments (bits) where the data layout string says nothing.
_DEFAULT_INT_ALIGN = {1: 8, 8: 8, 16: 16, 32: 32, 64: 32}
_DEFAULT_FLOAT_ALIGN = {16: 16, 32: 32, 64: 64, 128: 128}
_DEFAULT_VECTOR_ALIGN = {64: 64, 128: 128}
_FLOAT_BITS = {"half": 16, "bfloat": 16, "float": 32, "double": 64, "x86_fp80": 80,
               "fp128": 128, "ppc_fp128": 128}

_DATALAYOUT_RE = re.compile(r'^target datalayout = "([^"]*)"')
_VECTOR_RE = re.compile(r"^<\s*(vscale\s+x\s+)?(\d+)\s+x\s+(.*)>$")
_ARRAY_RE = re.compile(r"^\[\s*(\d+)\s+x\s+(.*)\]$")


class UnsizedTypeError(ValueError):
    """A type whose size is unknown here (opaque struct, scalable vector, target type)."""


def _align_to(value: int, align: int) -> int:
    return (value + align - 1) // align * align


def _pow2_ceil(value: int) -> int:
    return 1 << max(0, (value - 1).bit_length())


class TypeLayout:
    def __init__(self, top_level_lines):
        self.int_align = dict(_DEFAULT_INT_ALIGN)
        self.float_align = dict(_DEFAULT_FLOAT_ALIGN)
        self.vector_align = dict(_DEFAULT_VECTOR_ALIGN)
        self.pointer = {0: (64, 64)}          # address space -> (size bits, ABI align bits)
        self.aggregate_align = 8              # `a:` ABI alignment of aggregates, bits
        self.named: dict[str, str] = {}       # `%struct.S` -> its body text
        for line in top_level_lines:
            if line.startswith("target datalayout"):
                m = _DATALAYOUT_RE.match(line)
                if m:
                    self._read_datalayout(m.group(1))
            elif line.startswith("%"):
                m = NAMED_TYPE_RE.match(line)
                if m:
                    self.named[m.group(1)] = m.group(2).strip()
        self._cache: dict[str, tuple[int, int]] = {}

    def _read_datalayout(self, text: str) -> None:
        for spec in text.split("-"):
            if not spec:
                continue
            head, *fields = spec.split(":")
            nums = [int(f) for f in fields if f.isdigit()]
            kind, width = head[0], head[1:]
            if kind == "p" and nums:
                space = int(width) if width.isdigit() else 0
                self.pointer[space] = (nums[0], nums[1] if len(nums) > 1 else nums[0])
            elif kind in "ifv" and width.isdigit() and nums:
                table = {"i": self.int_align, "f": self.float_align, "v": self.vector_align}[kind]
                table[int(width)] = nums[0]
            elif kind == "a" and nums:
                self.aggregate_align = max(8, nums[0])

    # --- public -------------------------------------------------------------------------

    def store_size(self, ty: str) -> int:
        """Bytes written or read by a load/store of type ty."""
        bits, _ = self._bits_align(ty.strip())
        return (bits + 7) // 8

    def alloc_size(self, ty: str) -> int:
        bits, align = self._bits_align(ty.strip())
        return _align_to((bits + 7) // 8, align // 8)

    # --- the rules ----------------------------------------------------------------------

    def _bits_align(self, ty: str) -> tuple[int, int]:
        """(size in bits as the store size counts it, ABI alignment in bits)."""
        cached = self._cache.get(ty)
        if cached is None:
            cached = self._cache[ty] = self._compute(ty)
        return cached

    def _compute(self, ty: str) -> tuple[int, int]:
        if ty.startswith("i") and ty[1:].isdigit():
            width = int(ty[1:])
            return width, self._int_align(width)
        if ty in _FLOAT_BITS:
            bits = _FLOAT_BITS[ty]
            align = self.float_align.get(bits) or _pow2_ceil((bits + 7) // 8) * 8
            return bits, align
        if ty == "ptr" or ty.startswith("ptr addrspace("):
            space = int(ty[len("ptr addrspace("):-1]) if ty != "ptr" else 0
            size, align = self.pointer.get(space, self.pointer[0])
            return size, align
        if ty.startswith("["):
            m = _ARRAY_RE.match(ty)
            if m:
                count, elem = int(m.group(1)), m.group(2).strip()
                return 8 * count * self.alloc_size(elem), self._bits_align(elem)[1]
        if ty.startswith("<{"):
            return self._struct(ty[2:-2], packed=True)
        if ty.startswith("<"):
            m = _VECTOR_RE.match(ty)
            if m and not m.group(1):
                count, elem = int(m.group(2)), m.group(3).strip()
                bits = count * self._bits_align(elem)[0]
                align = self.vector_align.get(bits) or 8 * _pow2_ceil((bits + 7) // 8)
                return bits, align
        if ty.startswith("{"):
            return self._struct(ty[1:-1], packed=False)
        if ty.startswith("%"):
            body = self.named.get(ty)
            if body is not None and body != "opaque":
                return self._bits_align(body)
        raise UnsizedTypeError(ty)

    def _int_align(self, width: int) -> int:
        if width in self.int_align:
            return self.int_align[width]
        larger = [w for w in self.int_align if w > width]
        return self.int_align[min(larger) if larger else max(self.int_align)]

    def _struct(self, body: str, packed: bool) -> tuple[int, int]:
        offset = 0
        align = 8 if packed else self.aggregate_align
        for field in split_top_level(body) if body.strip() else []:
            field_ty, _ = read_type(field)
            _, field_align = self._bits_align(field_ty)
            if not packed:
                offset = _align_to(offset, field_align // 8)
                align = max(align, field_align)
            offset += self.alloc_size(field_ty)
        return 8 * _align_to(offset, align // 8), align

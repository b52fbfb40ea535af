"""The module's site table: each instrumented instruction gets an id = id_prefix | index."""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

from pyrsan.abi import (CAS_RETRY, CAS_WEAK, KIND_NUMBER, ORDER_NAME, PRIMITIVE_MASK, PRIMITIVE_SHIFT,
                        RMW_OP_NUMBER, WRITE_ONLY)

from .debuginfo import DebugInfo
from .model import IRFunction, IRLine
from .primitives import Primitives
from .results import Frame, Site


def id_prefix_for(module_id: str) -> int:
    """A stable 32-bit hash of the module id in the high half of a site id (never 0)."""
    h = int.from_bytes(hashlib.sha256(module_id.encode("utf-8")).digest()[:4], "little")
    return (h or 1) << 32


@dataclass(frozen=True)
class SiteEntry:
    """One row of the emitted rsan_site table (numbers as the ABI wants them)."""
    kind: int
    order: int
    order_fail: int
    size: int
    op: int


class SiteTable:
    def __init__(self, module_id: str, debug: DebugInfo):
        self.id_prefix = id_prefix_for(module_id)
        self.debug = debug
        self.sites: list[Site] = []
        self.entries: list[SiteEntry] = []
        self.write_only: set[str] = set()      # writeonly.py: the unit's write-only globals
        self.primitives = Primitives()

    def frames_at(self, fn: IRFunction, line: IRLine) -> tuple[Frame, ...]:
        frames = self.debug.frames(line.loc)
        return frames or self.debug.subprogram_frames(fn.subprogram)

    def add(self, fn: IRFunction, line: IRLine, kind: str, order: int = 0, size: int = 0,
            order_fail: int = 0, op: str = "", weak: bool = False,
            frames: tuple[Frame, ...] | None = None, retry_only: bool = False,
            write_only: bool = False) -> int:
        """frames: the site's frames when not those of `line` (annotations.py)."""
        index = len(self.sites)
        if index >= 1 << 32:
            raise OverflowError("more than 2**32 sites in one module")
        site_id = self.id_prefix | index
        op_number = (RMW_OP_NUMBER[op] if kind == "rmw" else
                     (CAS_WEAK if weak else 0) | (CAS_RETRY if retry_only else 0) |
                     (WRITE_ONLY if write_only else 0))
        primitive = (min(self.primitives.depth(self.debug, fn, line), PRIMITIVE_MASK)
                     if kind in ("load", "store", "rmw", "cas", "call") and frames is None else 0)
        op_number |= primitive << PRIMITIVE_SHIFT
        self.entries.append(SiteEntry(KIND_NUMBER[kind], order, order_fail, size, op_number))
        self.sites.append(Site(
            id=site_id, kind=kind, order="" if kind in ("call", "read", "write") else ORDER_NAME[order], size=size,
            frames=self.frames_at(fn, line) if frames is None else frames,
            order_fail=ORDER_NAME[order_fail] if kind == "cas" else "",
            op=op if kind == "rmw" else "", weak=weak, retry_only=retry_only and kind == "cas",
            primitive=primitive))
        return site_id

    def copy(self, index: int, frames: tuple[Frame, ...]) -> int:
        """A new site like site `index` (same entry) with other frames (passes/inlined.py)."""
        new = len(self.sites)
        if new >= 1 << 32:
            raise OverflowError("more than 2**32 sites in one module")
        site_id = self.id_prefix | new
        self.entries.append(self.entries[index])
        self.sites.append(dataclasses.replace(self.sites[index], id=site_id, frames=frames))
        return site_id

"""The site table of one instrumented module as JSON (`--sites-json`), for `pyrsan fix`:
which site is which instruction at which source position, and its order.

    {"module": "/abs/app.c", "sites": [{"id": "0x9f3a12c400000003", "index": 3, "kind": "store",
      "order": "release", "order_fail": "", "frames": [{"file": ..., "line": ..., "column": ...,
      "function": ...}]}, ...]}
"""
from __future__ import annotations

import json
from dataclasses import asdict

from .results import Site


def write_sites_json(path: str, module_id: str, sites: tuple[Site, ...]) -> None:
    rows = [{"id": "0x%016x" % site.id, "index": site.id & 0xFFFFFFFF, "kind": site.kind,
             "order": site.order, "order_fail": site.order_fail,
             "frames": [asdict(frame) for frame in site.frames]} for site in sites]
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"module": module_id, "sites": rows}, handle)

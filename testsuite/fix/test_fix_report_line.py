"""`pyrsan fix`'s one-line summary of a report (pyrsan/fix.py _report_line): a location with no
name (a stack variable, thread-local or mmap memory: the runtime names only globals and heap
blocks) is named by its address, not "?" (session 16: `read of ? at mp_sc_store_rlx_load.cpp:22`
for a member of a struct on main's stack)."""
from __future__ import annotations

from types import SimpleNamespace

from pyrsan.fix import _report_line


def line(location: dict) -> str:
    fields = {"location": location,
              "access": {"file": "/src/app.cpp", "line": 22, "function": "operator()", "thread": 2}}
    return _report_line(SimpleNamespace(type="read", fields=fields))


def test_an_unnamed_location_is_named_by_its_address():
    assert line({"address": "0x7ffccab800f0"}) == "read of 0x7ffccab800f0 at app.cpp:22 in operator() (thread 2)"


def test_a_named_location_keeps_its_name():
    assert line({"address": "0x55d0c0a01014", "name": "x"}) == "read of x at app.cpp:22 in operator() (thread 2)"

"""Plain accesses end to end: compile, instrument with `python -m pyrsan.passes`, link with the
counting stub runtime (stub_runtime.c), run. The output must not change, and the hooks must
see the right addresses, sizes and kinds (the stub traces them with RSAN_STUB_TRACE=-)."""
from __future__ import annotations

import re
import subprocess

import pytest

import test_passes_end_to_end as e2e
from passes_helpers import CC, CXX, HERE

DATA = HERE / "data"


def build_and_run(tmp_path, env, stub, source, opt, extra_sources=(), run_env=None,
                  passes_args=()):
    """(native stdout, instrumented stdout, instrumented stderr, instrumented IR text)."""
    cpp = source.suffix == ".cpp"
    compiler, std = (CXX, "-std=c++17") if cpp else (CC, "-std=c11")
    extra = []
    for helper in extra_sources:   # compiled natively, linked into both programs
        obj = tmp_path / (helper.stem + ".o")
        subprocess.run([CC, "-O1", "-c", str(helper), "-o", str(obj)], check=True)
        extra.append(str(obj))
    native = tmp_path / "native"
    subprocess.run([compiler, std, "-g", opt, str(source), *extra, "-pthread", "-o", str(native)],
                   check=True)
    bc = tmp_path / (source.stem + ".bc")
    subprocess.run([compiler, std, "-g", opt, "-c", "-emit-llvm", str(source), "-o", str(bc)],
                   check=True)
    obj, ll = tmp_path / (source.stem + ".rsan.o"), tmp_path / (source.stem + ".rsan.ll")
    p = e2e.passes_cli(env, bc, "-o", obj, "--module-id", source, "--emit-ll", ll, *passes_args)
    assert p.returncode == 0, p.stderr
    exe = tmp_path / "inst"
    subprocess.run([compiler, str(obj), *extra, str(stub), "-pthread", "-o", str(exe)], check=True)
    want = subprocess.run([str(native)], capture_output=True, text=True, check=True, timeout=60)
    got = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, env=run_env or {})
    assert got.returncode == 0, got.stderr
    return want.stdout, got.stdout, got.stderr, ll.read_text()


def sections(stderr: str) -> tuple[dict[str, int], dict[str, list[tuple[str, int, int]]]]:
    """(object addresses by name, the hooks (kind, address, size) of each marked section)."""
    addresses: dict[str, int] = {}
    found: dict[str, list[tuple[str, int, int]]] = {}
    current = None
    for line in stderr.splitlines():
        m = re.match(r"mark (\S+) (\S+) (\d+)$", line)
        if m:
            name, address = m.group(1), int(m.group(2), 16) if m.group(2).startswith("0x") else 0
            if name.startswith("@"):
                addresses[name[1:]] = address
                current = None
            else:
                addresses[name] = address
                current = found.setdefault(name, [])
            continue
        m = re.match(r"(read|write) (\S+) (\d+)$", line)
        if m and current is not None:
            current.append((m.group(1), int(m.group(2), 16), int(m.group(3))))
    return addresses, found


# section -> the hooks it must make, exactly: (kind, object, offset, size); the object is the
# section's own marked object or an "@" one. Read-then-write of one location keeps the write.
EXPECTED = {
    "store_int": [("write", "store_int", 0, 4)],
    "load_char": [("read", "load_char", 0, 1)],
    "add_long": [("write", "add_long", 0, 8)],
    "store_long_double": [("write", "store_long_double", 0, 10)],
    "copy_struct": [("read", "copy_struct", 0, 24), ("write", "g_rec2", 0, 24)],
    "copy_vector": [("read", "copy_vector", 0, 16), ("write", "g_vec2", 0, 16)],
    "clear_buffer": [("write", "clear_buffer", 0, 64)],
    "compare_buffers": [("write", "g_buf2", 5, 1), ("read", "compare_buffers", 0, 6),
                        ("read", "g_buf2", 0, 6)],
    "read_table": [],                                     # a constant global
    "copy_string": [("write", "copy_string", 0, 6)],      # the source is a constant literal
    "string_length": [("read", "string_length", 0, 6)],
    "copy_string_bounded": [("read", "copy_string_bounded", 0, 6), ("write", "g_str2", 0, 10)],
    "poke": [("write", "poke", 0, 1)],
    "compare_strings": [("read", "compare_strings", 0, 4), ("read", "g_str2", 0, 4)],
    "private_local": [],                                  # an alloca that never escapes
    "escaping_local": [("write", "escaping_local", 0, 4), ("read", "g_ptr", 0, 8),
                       ("read", "escaping_local", 0, 4)],
}


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_each_access_shape_reaches_its_hook_with_the_right_address_and_size(
        tmp_path, cli_env, stub_runtime, opt):
    want, got, err, ll = build_and_run(tmp_path, cli_env, stub_runtime, DATA / "plain_accesses.c",
                                       opt, extra_sources=[DATA / "plain_marker.c"],
                                       run_env={"RSAN_STUB_TRACE": "-"})
    assert got == want and "esc=2" in got
    addresses, found = sections(err)
    for name, hooks in EXPECTED.items():
        expected = sorted((kind, addresses[obj] + offset, size) for kind, obj, offset, size in hooks)
        assert sorted(found[name]) == expected, name
    # the escaping local's first store and the published pointer, before its own section
    setup = sorted(found["escaping_setup"], key=lambda hook: hook[2])
    assert setup == [("write", addresses["escaping_local"], 4), ("write", addresses["g_ptr"], 8)]
    s = e2e.stats(err)
    assert s["bad"] == 0 and s["noframes"] == 0


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_threads_with_private_arrays_and_a_mutex_run_unchanged(tmp_path, cli_env, stub_runtime, opt):
    want, got, err, _ = build_and_run(tmp_path, cli_env, stub_runtime, DATA / "plain_threads.c", opt)
    assert got == want and got.startswith("total=")
    s = e2e.stats(err)
    assert s["bad"] == 0 and s["noframes"] == 0
    # every worker reads the shared input and adds its result under the lock: 4 threads
    assert s["read"] + s["rread"] >= 4 * 1000 and s["write"] >= 4


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_cpp_containers_strings_and_threads_run_unchanged(tmp_path, cli_env, stub_runtime, opt):
    want, got, err, ll = build_and_run(tmp_path, cli_env, stub_runtime,
                                       DATA / "plain_accesses.cpp", opt)
    assert got == want and "words=" in got
    s = e2e.stats(err)
    assert s["bad"] == 0 and s["noframes"] == 0
    assert s["read"] > 0 and s["write"] > 0 and s["rread"] + s["rwrite"] > 0


def test_no_plain_accesses_leaves_them_alone(tmp_path, cli_env, stub_runtime):
    want, got, err, ll = build_and_run(tmp_path, cli_env, stub_runtime, DATA / "plain_threads.c",
                                       "-O1", passes_args=["--no-plain-accesses"])
    assert got == want
    s = e2e.stats(err)
    assert s["read"] == s["write"] == s["rread"] == s["rwrite"] == 0 and s["bad"] == 0
    assert not re.search(r"@__rsan_(read|write)_", ll)

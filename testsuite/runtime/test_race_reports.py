"""Race reports of the runtime (docs/interfaces.md "Race reports"): the text block, the JSON
fields, the call stack of the access, where each thread was created, heap blocks."""


def spawn_with_site(rt, parent, call_site):
    """rsan_thread_create from inside a call at call_site, as the pthread_create interceptor
    runs it (stack_helper.c)."""
    return rt.lib.helper_create(parent, call_site)


def racing_pair(rt, target):
    """main creates T1 and T2 (at lines 5 and 6); T1 reads target at line 11, T2 writes it
    inside a call made at line 20 (the write itself at line 21)."""
    lib = rt.lib
    main = rt.rsan.test_new_thread(rt.ffi.NULL)
    rt.rsan.test_set_current(main)
    t1 = spawn_with_site(rt, main, rt.site("call", 5, "main"))
    t2 = spawn_with_site(rt, main, rt.site("call", 6, "main"))
    rt.rsan.test_set_current(t1)
    rt.read(target, site=rt.site("read", 11, "t1"))
    rt.rsan.test_set_current(t2)
    lib.helper_outer_write(target, rt.site("call", 20, "t2"), rt.site("write", 21, "helper", file="/abs/helper.c"))
    return rt.races()


def test_race_json_names_both_accesses_the_stack_and_where_the_threads_were_created(rt):
    x = rt.var("x")
    (r,) = racing_pair(rt, x)
    assert r["kind"] == "race" and r["type"] == "write" and r["model"] == "C11 happens-before"
    # the text says what was checked (issue 13): hb of the run, seq_cst and SC fences as in C11
    assert "Model: C11 happens-before of this run" in r["text"]
    assert "seq_cst accesses as acquire/release, SC fences as acq_rel fences" in r["text"]
    assert r["location"] == {"address": hex(int(rt.ffi.cast("uintptr_t", x))), "object": "global", "name": "x"}
    acc, prev = r["access"], r["previous"]
    assert (acc["thread"], acc["type"], acc["atomic"], acc["size"]) == (2, "write", False, 4)
    assert (prev["thread"], prev["type"], prev["atomic"], prev["size"]) == (1, "read", False, 4)
    assert [(f["function"], f["line"]) for f in acc["stack"]] == [("helper", 21), ("t2", 20)]
    assert (acc["file"], acc["line"]) == ("/abs/helper.c", 21)
    assert [(f["function"], f["line"]) for f in prev["stack"]] == [("t1", 11)]
    threads = {t["thread"]: t for t in r["threads"]}
    assert threads[2]["created_by"] == 0 and threads[2]["line"] == 6
    assert threads[1]["created_by"] == 0 and threads[1]["line"] == 5
    a, b = sorted(int(s, 16) for s in (acc["site"], prev["site"]))
    assert r["key"] == f"0x{a:016x}/0x{b:016x}/race"


def test_race_text_block_reads_like_thread_sanitizer(rt):
    x = rt.var("x")
    (r,) = racing_pair(rt, x)
    text = r["text"]
    lines = text.splitlines()
    assert lines[0] == "==================" and lines[-1] == "=================="
    assert lines[1].startswith("WARNING: pyrsan: data race (pid=")
    assert lines[2].startswith("  Write of size 4 at 0x") and lines[2].endswith("by thread T2:")
    assert lines[3] == "    #0 helper /abs/helper.c:21:5"
    assert lines[4] == "    #1 t2 /abs/litmus.c:20:5"
    assert lines[5].startswith("  Previous read of size 4 at 0x") and lines[5].endswith("by thread T1:")
    assert "  Location is global 'x' at 0x" in text
    assert "  Thread T2 created by thread T0 at:\n    #0 main /abs/litmus.c:6:5\n" in text
    assert "  Thread T1 created by thread T0 at:\n    #0 main /abs/litmus.c:5:5\n" in text
    assert "SUMMARY: pyrsan: data race /abs/helper.c:21 in helper" in text


def test_heap_object_is_named_by_its_block_and_allocation_site(rt):
    buf = rt.ffi.new("uint64_t[4]")  # stands in for a malloc'ed block of 32 bytes
    main = rt.rsan.test_new_thread(rt.ffi.NULL)
    rt.rsan.test_set_current(main)
    rt.lib.helper_alloc(buf, 32, rt.site("call", 3, "main"))
    target = rt.ffi.cast("char *", buf) + 8
    (r,) = racing_pair(rt, target)
    loc = r["location"]
    base = int(rt.ffi.cast("uintptr_t", buf))
    assert loc["object"] == "heap" and int(loc["address"], 16) == base + 8
    assert loc["block"]["address"] == hex(base) and loc["block"]["size"] == 32
    assert loc["block"]["thread"] == 0 and loc["block"]["line"] == 3
    assert loc["name"] == "offset 8 of heap block allocated at litmus.c:3" and loc["block"]["offset"] == 8
    assert ("  Location is offset 8 of heap block allocated at litmus.c:3 (size 32, allocated by thread T0;"
            f" block at {hex(base)}, location at {hex(base + 8)})") in r["text"]


def test_a_freed_block_is_no_longer_named(rt):
    buf = rt.ffi.new("uint64_t[4]")
    main = rt.rsan.test_new_thread(rt.ffi.NULL)
    rt.rsan.test_set_current(main)
    rt.lib.helper_alloc(buf, 32, rt.site("call", 3, "main"))
    rt.lib.rsan_heap_free(buf)
    (r,) = racing_pair(rt, buf)
    assert r["location"]["object"] == "unknown" and "name" not in r["location"]


def test_text_report_goes_to_stderr_only_with_print_reports(rt, capfd):
    x = rt.var("x")
    rt.rsan.test_set_options(f"json_path={rt.json} print_reports=1".encode())
    racing_pair(rt, x)
    err = capfd.readouterr().err
    assert "WARNING: pyrsan: data race" in err


def test_previous_access_gets_the_call_stack_its_thread_remembers_for_its_site(rt):
    x = rt.var("x")
    main = rt.rsan.test_new_thread(rt.ffi.NULL)
    rt.rsan.test_set_current(main)
    t1, t2 = rt.lib.rsan_thread_create(main), rt.lib.rsan_thread_create(main)
    rt.rsan.test_set_current(t1)
    rt.lib.helper_outer_write(x, rt.site("call", 30, "t1"), rt.site("write", 31, "helper", file="/abs/helper.c"))
    rt.rsan.test_set_current(t2)
    rt.read(x, site=rt.site("read", 40, "t2"))
    (r,) = rt.races()
    assert [(f["function"], f["line"]) for f in r["previous"]["stack"]] == [("helper", 31), ("t1", 30)]
    assert "  Previous write of size 4" in r["text"] and "    #1 t1 /abs/litmus.c:30:5" in r["text"]


def test_two_sites_with_one_first_slot_each_keep_their_call_stack(rt):
    """T1 writes x and then y from inside a call, at two sites whose first slots in its table
    of call stacks are the same (indices 64 apart: rsan_race.h rsan_race_site_slot): T2's read
    of x names T1's write of x with the whole stack T1 remembered for its site. The second site
    went to its second slot (docs/design/races.md §19) and did not evict the first. Mutants
    caught: one slot per site (the second slot the first, or the second never chosen: the
    report lost the outer frame, t1's call at line 30)."""
    x, y = rt.var("x"), rt.var("y")
    main = rt.rsan.test_new_thread(rt.ffi.NULL)
    rt.rsan.test_set_current(main)
    t1, t2 = rt.lib.rsan_thread_create(main), rt.lib.rsan_thread_create(main)
    call = rt.site("call", 30, "t1")
    w1 = rt.site("write", 31, "helper", file="/abs/helper.c")
    for i in range(63):
        rt.site("read", 100 + i, "filler")
    w2 = rt.site("write", 32, "helper", file="/abs/helper.c")
    assert w2 - w1 == 64  # RSAN_SITE_STACKS
    rt.rsan.test_set_current(t1)
    rt.lib.helper_outer_write(x, call, w1)
    rt.lib.helper_outer_write(y, call, w2)
    rt.rsan.test_set_current(t2)
    rt.read(x, site=rt.site("read", 40, "t2"))
    (r,) = rt.races()
    assert [(f["function"], f["line"]) for f in r["previous"]["stack"]] == [("helper", 31), ("t1", 30)]

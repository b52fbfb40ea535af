"""Thread create/join edges, sync primitives (rsan_sync.h), retiring memory, the shadow call
stack."""
import time

from harness import Program, reports_over_all, run


def test_mp_through_thread_create_is_robust_and_a_thread_without_the_edge_is_reported(rt):
    lib = rt.lib
    for with_edge in (True, False):
        rt.reset()
        x, y = rt.var("x"), rt.var("y")
        main = lib.__rsan_test_new_thread(rt.ffi.NULL)
        lib.__rsan_test_set_current(main)
        rt.store(x, 1, site=rt.site("st", 1, "main"))
        rt.store(y, 1, site=rt.site("st", 2, "main"))
        child = lib.rsan_thread_create(main) if with_edge else lib.__rsan_test_new_thread(rt.ffi.NULL)
        lib.rsan_thread_start(child)
        assert rt.load(y, site=rt.site("ld", 3, "child")) == 1
        assert rt.load(x, site=rt.site("ld", 4, "child")) == 1
        assert len(rt.reports()) == (0 if with_edge else 1)


def test_mp_through_join_is_robust_and_without_the_join_is_reported(rt):
    lib = rt.lib
    for with_join in (True, False):
        rt.reset()
        x, y = rt.var("x"), rt.var("y")
        main = lib.__rsan_test_new_thread(rt.ffi.NULL)
        lib.__rsan_test_set_current(main)
        child = lib.rsan_thread_create(main)
        lib.rsan_thread_start(child)
        rt.store(x, 1, site=rt.site("st", 1, "child"))
        rt.store(y, 1, site=rt.site("st", 2, "child"))
        lib.rsan_thread_finish(child, rt.ffi.NULL, rt.ffi.NULL)
        lib.__rsan_test_set_current(main)
        if with_join:
            lib.rsan_thread_join(main, child)
        rt.load(y, site=rt.site("ld", 3, "main"))
        rt.load(x, site=rt.site("ld", 4, "main"))
        assert len(rt.reports()) == (0 if with_join else 1)


def test_child_starts_with_an_empty_release_view(rt):
    # main: x=1; F_rel; create T1 || T1: y=1 (rlx) || T2: a=y (acq); b=x
    # T1 must not release main's view through its relaxed store (Tr := bottom).
    lib = rt.lib
    x, y = rt.var("x"), rt.var("y")
    main = lib.__rsan_test_new_thread(rt.ffi.NULL)
    lib.__rsan_test_set_current(main)
    rt.store(x, 1, site=rt.site("st", 1, "main"))
    rt.fence("rel")
    t1 = lib.rsan_thread_create(main)
    assert lib.__rsan_test_thread_clock(t1, 1, x) == 0  # Tr(x)
    assert lib.__rsan_test_thread_clock(t1, 0, x) == 1  # Tc(x)
    assert lib.__rsan_test_thread_clock(t1, 2, x) == 1  # Ta(x)
    assert lib.__rsan_test_thread_clock(t1, 3, x) == 1  # Tsc(x)
    # T2 forgets x: use a fresh root thread as T2 so only y can carry the view
    t2 = lib.__rsan_test_new_thread(rt.ffi.NULL)
    lib.__rsan_test_set_current(t1)
    rt.store(y, 1, site=rt.site("st", 2, "t1"))
    lib.__rsan_test_set_current(t2)
    rt.load(y, "acq", site=rt.site("ld", 3, "t2"))
    rt.load(x, site=rt.site("ld", 4, "t2"))
    reps = rt.reports()
    assert [r["location"]["name"] for r in reps] == ["x"]


def locked_sb(with_locks=True):
    def body(a, b):
        ops = [("st", a, 1, "rlx"), ("ld", b, "rlx")]
        return [("lock", "m")] + ops + [("unlock", "m")] if with_locks else ops
    return Program(body("x", "y"), body("y", "x"))


def test_lock_protected_sb_is_robust_in_every_interleaving(rt):
    n, bad = reports_over_all(rt, locked_sb())
    assert n == 2 and bad == []  # only the two schedules that respect the lock run


def test_sb_without_the_locks_is_reported(rt):
    res = run(rt, locked_sb(False), (0, 0, 1, 1))
    assert len(res.reports) == 1


def test_retire_gives_a_new_location_with_fresh_clocks(rt):
    lib = rt.lib
    # SB's paper run, but x is freed and reused before T2 reads it: no report
    rt.reset()
    x, y = rt.var("x"), rt.var("y")
    main = lib.__rsan_test_new_thread(rt.ffi.NULL)
    t1, t2 = lib.rsan_thread_create(main), lib.rsan_thread_create(main)
    lib.__rsan_test_set_current(t1)
    rt.store(x, 1, site=rt.site("st", 1, "t1"))
    rt.load(y, site=rt.site("ld", 2, "t1"))
    old_id = lib.__rsan_test_location_id(x)
    assert old_id != 0
    lib.rsan_memory_retire(x, 8)
    assert lib.__rsan_test_location_id(x) == 0
    lib.__rsan_test_set_current(t2)
    rt.store(y, 1, site=rt.site("st", 3, "t2"))
    rt.load(x, site=rt.site("ld", 4, "t2"))
    new_id = lib.__rsan_test_location_id(x)
    assert new_id not in (0, old_id)
    assert lib.__rsan_test_location_id(y) != 0  # neighbours survive
    assert rt.reports() == []


def test_retiring_a_huge_range_is_cheap_and_removes_only_what_is_inside(rt):
    ffi, lib = rt.ffi, rt.lib
    buf = ffi.new("uint32_t[4096]")
    for i in range(0, 4096, 64):
        rt.store(buf + i, i)
    assert lib.__rsan_test_location_count() == 64
    start = time.perf_counter()
    lib.rsan_memory_retire(ffi.cast("void *", 4096), (1 << 47) - 4096)  # all of x86-64 user space
    assert time.perf_counter() - start < 0.5
    assert lib.__rsan_test_location_count() == 0
    ids = [lib.__rsan_test_location_id(buf + i) for i in range(0, 4096, 64)]
    assert ids == [0] * 64
    rt.store(buf, 7)
    assert lib.__rsan_test_location_count() == 1


def test_partial_retire_keeps_locations_outside_the_range(rt):
    ffi, lib = rt.ffi, rt.lib
    buf = ffi.new("uint32_t[4096]")
    for i in range(0, 4096, 64):
        rt.store(buf + i, i)
    lib.rsan_memory_retire(buf + 1024, 4 * 2048)  # elements [1024, 3072)
    alive = [i for i in range(0, 4096, 64) if lib.__rsan_test_location_id(buf + i)]
    assert alive == [i for i in range(0, 4096, 64) if not 1024 <= i < 3072]


def test_report_stack_has_the_call_site_of_the_shadow_call_stack(rt):
    lib = rt.lib
    x, y = rt.sb_prefix()
    call = rt.site("call", 40, "t2_outer", size=0)
    load = rt.site("ld", 50, "load_x", file="/usr/include/c++/12/bits/atomic_base.h",
                   inline_of=("/abs/litmus.c", 45, "t2_inner"))
    lib.helper_outer_load(rt.ffi.cast("uint32_t *", x), call, load)
    (r,) = rt.reports()
    stack = [(f["file"], f["line"], f["function"]) for f in r["access"]["stack"]]
    assert stack == [("/usr/include/c++/12/bits/atomic_base.h", 50, "load_x"),
                     ("/abs/litmus.c", 45, "t2_inner"), ("/abs/litmus.c", 40, "t2_outer")]
    # primary frame: the innermost one that is not in a system header
    assert (r["access"]["file"], r["access"]["line"], r["access"]["function"]) == ("/abs/litmus.c", 45, "t2_inner")
    assert "SUMMARY: pyrsan: robustness violation /abs/litmus.c:45 in t2_inner" in r["text"]


def test_shadow_call_stack_depth_is_bounded_and_stale_frames_are_dropped(rt):
    lib = rt.lib
    x, y = rt.sb_prefix()
    call = rt.site("call", 40, "rec", size=0)
    load = rt.site("ld", 50, "leaf")
    # 500 nested calls without func_exit; then a fresh call that should drop them all
    lib.helper_deep_load(500, rt.ffi.cast("uint32_t *", x), call, load)
    (r,) = rt.reports()
    assert 1 < len(r["access"]["stack"]) <= 65

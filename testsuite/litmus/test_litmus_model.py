"""Each litmus program's `// robust:` verdict confirmed by the reference model.

The program's operations are transcribed into the model's op tuples (litmus_model.py: from the
source for straight-line programs, else from the hand `// model:` block at the end of the
file), the model (testsuite/reference/rc20.py) decides robustness from the RC20 and SC
definitions, and the test compares that verdict with the header. The verdict comes from the
model; the header is only what it is compared with.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import rc20
from litmus_header import parse_program
from litmus_model import Transcription, Untranscribable, transcribe

HERE = Path(__file__).resolve().parent
PROGRAMS = sorted(HERE.glob("*.c"))
# The model's cost grows fast with the events (SC fences and fenced seq_cst accesses add three
# each): bigger programs run with -m slow.
FAST_EVENTS = 24
# ... and beyond this many the model takes hours (iriw_sc.c: 42 events after fencing its six
# seq_cst accesses); those are skipped with the reason.
MAX_EVENTS = 36
# Programs with no faithful transcription (a `// model-none:` reason); keep it short.
MAX_UNTRANSCRIBED = 6


def _events(t: Transcription) -> int:
    return sum(len(rc20.expand_thread(ops, t.sc)) for ops in t.threads)


def _cases():
    for path in PROGRAMS:
        program = parse_program(path)
        try:
            t = transcribe(path, program.options)
        except Untranscribable:
            marks = ()
        else:
            marks = (pytest.mark.slow,) if _events(t) > FAST_EVENTS else ()
        yield pytest.param(path, id=path.name, marks=marks)


@pytest.mark.parametrize("path", _cases())
def test_reference_model_confirms_the_litmus_verdict(path):
    program = parse_program(path)
    try:
        t = transcribe(path, program.options)
    except Untranscribable as why:
        if str(why).startswith("model-none: "):
            pytest.skip(str(why))
        raise AssertionError(f"{path.name}: cannot transcribe ({why}); add a // model: block")
    if _events(t) > MAX_EVENTS:
        pytest.skip(f"{_events(t)} events: too many for the reference model in a test")
    robust = rc20.robust(t.threads, t.sc)
    if t.prefix:
        assert not program.robust, f"{path.name}: a prefix transcription only confirms 'no'"
    assert robust is program.robust, (
        f"{path.name}: the reference model says robust={robust} ({t.how} transcription, "
        f"sc_accesses={t.sc}), the header says {'yes' if program.robust else 'no'}\n"
        f"threads: {t.threads}\n{rc20.check(t.threads, t.sc).witness if not robust else ''}")


def test_nearly_every_program_has_a_transcription():
    reasons = {}
    for path in PROGRAMS:
        try:
            transcribe(path, parse_program(path).options)
        except Untranscribable as why:
            reasons[path.name] = str(why)
    assert all(r.startswith("model-none: ") for r in reasons.values()), reasons
    assert len(reasons) <= MAX_UNTRANSCRIBED, reasons


def test_the_families_of_issue_3_are_confirmed_from_their_source():
    """MP with fences, release sequences through RMWs (and broken by a store), 2+2W, IRIW with
    fences, RSAN paper Ex. 7.1, the §7 three-thread SC-fence program, and the recognised spin
    loops: transcribed automatically, without a hand block."""
    for name in ("mp_fenced.c", "mp_fenced_sc.c", "mp_relseq_fadd.c", "mp_relseq_broken.c",
                 "2p2w_rlx.c", "2p2w_fenced.c", "2p2w_reads.c", "iriw_fenced.c", "scfence_3t.c",
                 "bar_spin.c", "bar_spin_ne.c", "mp_spin_rlx.c"):
        assert transcribe(HERE / name).how == "source", name


def test_transcription_reads_each_statement_kind(tmp_path):
    source = tmp_path / "t.c"
    source.write_text(
        "static void *t1(void *arg) {\n  (void)arg;\n"
        "  atomic_store_explicit(&x, 1, memory_order_release); // pyrsan: stale\n"
        "  r0 = atomic_fetch_add_explicit(&y, 2, memory_order_acq_rel);\n"
        "  atomic_thread_fence(memory_order_seq_cst);\n"
        "  { int e = 1; r1 = atomic_compare_exchange_weak_explicit(&y, &e, 2,"
        " memory_order_acquire, memory_order_relaxed); }\n"
        "  return NULL;\n}\n"
        "static void *t2(void *arg) {\n"
        "  while (!atomic_load_explicit(&x, memory_order_acquire))\n    ;\n"
        "  while (atomic_load_explicit(&y, memory_order_relaxed) != 3)\n    ;\n"
        "  pyrsan_bcas(&z, 0, 1);\n  r2 = atomic_load(&z);\n  return NULL;\n}\n"
        "int main(void) {\n  void *(*fn[2])(void *) = {t2, t1};\n}\n")
    t = transcribe(source)
    assert t.threads == [
        [("waitne", "x", 0, "acq"), ("wait", "y", 3, "rlx"), ("bcas", "z", 0, 1, "sc"),
         ("ld", "z", "sc")],
        [("st", "x", 1, "rel"), ("rmw", "y", "add", 2, "ar"), ("fence", "sc"),
         ("cas", "y", 1, 2, "acq", "rlx", True)]]
    assert (t.sc, t.prefix, t.how) == ("fenced", False, "source")
    assert transcribe(source, ("--sc-accesses", "ra")).sc == "ra"


def test_unknown_statements_and_hand_blocks(tmp_path):
    source = tmp_path / "t.c"
    source.write_text("static void *t1(void *arg) {\n  plain++;\n  return NULL;\n}\n"
                      "int main(void) {\n  pthread_create(&a, NULL, t1, NULL);\n}\n")
    with pytest.raises(Untranscribable, match="plain"):
        transcribe(source)
    source.write_text(source.read_text() + "// model-prefix: T1: st(x, 1, rlx); ld(y, acq)\n"
                      "// model-prefix: T2: cas(y, 0, 1, ar, acq, strong); wait(x, 1, rlx)\n")
    t = transcribe(source)
    assert t.prefix and t.how == "hand" and t.threads == [
        [("st", "x", 1, "rlx"), ("ld", "y", "acq")],
        [("cas", "y", 0, 1, "ar", "acq", False), ("wait", "x", 1, "rlx")]]

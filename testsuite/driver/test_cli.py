"""The pyrsan CLI end to end: error paths, exit codes, the JSON document, pass-through of
the program's I/O, `pyrsan build`. Most tests need clang, the passes and the runtime."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest

# A deterministic robustness violation: t2 waits (relaxed, so no happens-before) until t1
# is done, then reads x with acquire. SC forces it to see x = 1, the C11 model lets it see
# the initial 0: the load on line VIOLATING_LINE is reported in every run.
VIOLATION_C = textwrap.dedent("""\
    #include <pthread.h>
    #include <stdatomic.h>
    #include <stdio.h>
    atomic_int x, y, done;
    int r1, r2;
    static void *t1(void *arg) {
      atomic_store_explicit(&x, 1, memory_order_release);
      r1 = atomic_load_explicit(&y, memory_order_acquire);
      atomic_store_explicit(&done, 1, memory_order_relaxed);
      return arg;
    }
    static void *t2(void *arg) {
      while (!atomic_load_explicit(&done, memory_order_relaxed)) {}
      atomic_store_explicit(&y, 1, memory_order_release);
      r2 = atomic_load_explicit(&x, memory_order_acquire);
      return arg;
    }
    int main(void) {
      pthread_t a, b;
      pthread_create(&a, 0, t1, 0);
      pthread_create(&b, 0, t2, 0);
      pthread_join(a, 0);
      pthread_join(b, 0);
      printf("r1=%d r2=%d\\n", r1, r2);
      return 0;
    }
    """)
VIOLATING_LINE = 15

CLEAN_C = textwrap.dedent("""\
    #include <pthread.h>
    #include <stdatomic.h>
    #include <stdio.h>
    atomic_long counter;
    static void *work(void *arg) {
      for (int i = 0; i < 100; i++) atomic_fetch_add(&counter, 1);
      return arg;
    }
    int main(void) {
      pthread_t a, b;
      pthread_create(&a, 0, work, 0);
      pthread_create(&b, 0, work, 0);
      pthread_join(a, 0);
      pthread_join(b, 0);
      printf("counter=%ld\\n", atomic_load(&counter));
      return 0;
    }
    """)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# --- errors a user can cause: exit 2, one line, no traceback -----------------------------

def test_missing_source_file(run_pyrsan, tmp_path):
    proc = run_pyrsan("run", tmp_path / "nothere.c")
    assert proc.returncode == 2
    assert one_line(proc.stderr) == f"pyrsan: {tmp_path / 'nothere.c'}: no such file"


def test_unknown_extension(run_pyrsan, tmp_path):
    src = write(tmp_path, "prog.f90", "program p\nend\n")
    proc = run_pyrsan("run", src)
    assert proc.returncode == 2 and "unknown source file type" in one_line(proc.stderr)


@pytest.mark.parametrize("args", [["--runs", "abc"], ["--runs", "0"], ["--timeout", "-1"],
                                  ["--sc-accesses", "bogus"], ["--no-such-option"]])
def test_bad_option_values(run_pyrsan, tmp_path, args):
    src = write(tmp_path, "clean.c", "int main(void) { return 0; }\n")
    proc = run_pyrsan("run", *args, src)
    assert proc.returncode == 2
    assert one_line(proc.stderr).startswith("pyrsan: ")


def test_compile_error_shows_clangs_diagnostics(run_pyrsan, tmp_path):
    src = write(tmp_path, "broken.c", "int main(void) {\n  return undeclared_thing;\n}\n")
    proc = run_pyrsan("run", src)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert lines[0] == f"pyrsan: compilation of {src} failed"
    assert any("error:" in line and "undeclared_thing" in line for line in lines[1:])
    assert "Traceback" not in proc.stderr


def test_nonexistent_pyrsan_cc(run_pyrsan, tmp_path):
    src = write(tmp_path, "clean.c", "int main(void) { return 0; }\n")
    proc = run_pyrsan("run", src, env={"PYRSAN_CC": "/nonexistent"})
    assert proc.returncode == 2
    line = one_line(proc.stderr)
    assert "PYRSAN_CC=/nonexistent" in line and "apt-get install clang-22" in line


def test_no_clang_on_path(run_pyrsan, tmp_path):
    src = write(tmp_path, "clean.c", "int main(void) { return 0; }\n")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    proc = run_pyrsan("run", src, env={"PATH": str(empty)})
    assert proc.returncode == 2
    line = one_line(proc.stderr)
    assert "no usable clang" in line and "apt-get install clang-22" in line


def test_int128_atomic_program_runs(run_pyrsan, tmp_path):
    """16-byte atomics are modelled (issue 14), not a build error."""
    src = write(tmp_path, "wide.c", textwrap.dedent("""\
        _Atomic __int128 wide;
        int main(void) {
          wide = 1;
          return (int)wide - 1;
        }
        """))
    proc = run_pyrsan("run", src, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_generic_atomic_call_on_a_large_struct_runs(run_pyrsan, tmp_path):
    src = write(tmp_path, "big.c", textwrap.dedent("""\
        struct big { long a, b, c; };
        struct big shared = {7, 0, 0};
        int main(void) {
          struct big r;
          __atomic_load(&shared, &r, __ATOMIC_SEQ_CST);
          return (int)r.a - 7;
        }
        """))
    proc = run_pyrsan("run", src, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_json_is_written_with_verdict_error_on_a_build_error(run_pyrsan, tmp_path):
    src = write(tmp_path, "broken.c", "int main(void) { return nope; }\n")
    out = tmp_path / "out.json"
    proc = run_pyrsan("run", "--json", out, src)
    assert proc.returncode == 2
    doc = json.loads(out.read_text())
    assert doc["verdict"] == "error" and doc["runs"] == 0 and "compilation" in doc["error"]


def test_version_and_help(run_pyrsan):
    version = run_pyrsan("--version")
    assert version.returncode == 0 and "pyrsan" in version.stdout
    helptext = run_pyrsan("run", "--help")
    assert helptext.returncode == 0
    for word in ("--runs", "--json", "--timeout", "--keep-going", "--sc-accesses", "66"):
        assert word in helptext.stdout


# --- running programs ---------------------------------------------------------------------

def test_violation_is_reported_with_exit_66_and_a_summary(run_pyrsan, tmp_path):
    src = write(tmp_path, "viol.c", VIOLATION_C)
    proc = run_pyrsan("run", src)
    assert proc.returncode == 66, proc.stderr
    assert "pyrsan: 1 robustness violation" in proc.stderr or "robustness violations in 1 run" in proc.stderr
    assert proc.stdout.startswith("r1=")


def test_json_document_schema_and_types(run_pyrsan, tmp_path):
    src = write(tmp_path, "viol.c", VIOLATION_C)
    out = tmp_path / "out.json"
    proc = run_pyrsan("run", "--json", out, src)
    assert proc.returncode == 66, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["verdict"] == "violations" and doc["runs"] == 1
    assert doc["crashes"] == [] and doc["timeouts"] == []
    assert doc["reports"], doc
    for rep in doc["reports"]:
        assert "text" not in rep and "pid" not in rep
        assert rep["kind"] == "robustness" and rep["type"] in ("read", "write")
        assert isinstance(rep["model"], str) and isinstance(rep["suggestion"], str)
        assert isinstance(rep["location"], dict) and isinstance(rep["location"]["address"], str)
        assert rep["runs_seen"] == 1 and isinstance(rep["key"], str)
        assert all(isinstance(rep["timestamps"][k], int) for k in ("hb", "sc"))
        access = rep["access"]
        assert isinstance(access["thread"], int) and isinstance(access["order"], str)
        assert isinstance(access["file"], str) and isinstance(access["function"], str)
        assert isinstance(access["line"], int) and isinstance(access["column"], int)
        for frame in access["stack"]:
            assert {"file", "line", "column", "function"} <= set(frame)
        assert isinstance(rep["previous"], dict)
    lines = {(os.path.basename(r["access"]["file"]), r["access"]["line"]) for r in doc["reports"]}
    assert ("viol.c", VIOLATING_LINE) in lines


def test_runs_stop_at_the_first_reporting_run_unless_keep_going(run_pyrsan, tmp_path):
    src = write(tmp_path, "viol.c", VIOLATION_C)
    out = tmp_path / "out.json"
    assert run_pyrsan("run", "--runs", "4", "--json", out, src).returncode == 66
    assert json.loads(out.read_text())["runs"] == 1
    assert run_pyrsan("run", "--runs", "3", "--keep-going", "--json", out, src).returncode == 66
    doc = json.loads(out.read_text())
    assert doc["runs"] == 3
    assert any(rep["runs_seen"] == 3 for rep in doc["reports"])


def test_clean_program_exits_0_after_all_runs(run_pyrsan, tmp_path):
    src = write(tmp_path, "clean.c", CLEAN_C)
    out = tmp_path / "out.json"
    proc = run_pyrsan("run", "--runs", "3", "--json", out, src)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "counter=200\n" * 3
    assert proc.stderr.splitlines()[-1] == "pyrsan: no robustness violation found in 3 runs"
    doc = json.loads(out.read_text())
    assert (doc["verdict"], doc["runs"], doc["reports"]) == ("clean", 3, [])


def test_program_stdio_passes_through_unchanged(run_pyrsan, tmp_path):
    src = write(tmp_path, "io.c", textwrap.dedent("""\
        #include <stdio.h>
        int main(int argc, char **argv) {
          char line[64];
          if (!fgets(line, sizeof line, stdin)) return 1;
          printf("got:%s", line);
          for (int i = 1; i < argc; i++) printf("[%s]", argv[i]);
          fputs("no newline at the end", stdout);
          fputs("to stderr\\n", stderr);
          return 0;
        }
        """))
    proc = run_pyrsan("run", src, "--", "-DX", "two words", input="hello\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "got:hello\n[-DX][two words]no newline at the end"
    assert proc.stderr.startswith("to stderr\n")


def test_program_exiting_66_by_itself_is_not_a_report(run_pyrsan, tmp_path):
    src = write(tmp_path, "exit66.c", "int main(void) { return 66; }\n")
    proc = run_pyrsan("run", src)
    assert proc.returncode == 0, proc.stderr


def test_crashing_program_exits_3(run_pyrsan, tmp_path):
    src = write(tmp_path, "crash.c", "#include <signal.h>\nint main(void) { raise(SIGSEGV); return 0; }\n")
    proc = run_pyrsan("run", src)
    assert proc.returncode == 3, proc.stderr
    assert "pyrsan: the program crashed with SIGSEGV in run 1" in proc.stderr


def test_hanging_program_times_out_with_exit_3(run_pyrsan, tmp_path):
    src = write(tmp_path, "hang.c", "#include <unistd.h>\nint main(void) { for (;;) pause(); }\n")
    proc = run_pyrsan("run", "--timeout", "1", src, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert "pyrsan: the program timed out after 1 s in run 1" in proc.stderr


def test_compiler_flags_pass_through(run_pyrsan, tmp_path):
    (tmp_path / "inc").mkdir()
    write(tmp_path / "inc", "value.h", "#define VALUE 7\n")
    src = write(tmp_path, "flags.c", textwrap.dedent("""\
        #include <stdio.h>
        #include "value.h"
        int main(void) { printf("%d %d %ld\\n", VALUE, EXTRA, __STDC_VERSION__); return 0; }
        """))
    proc = run_pyrsan("run", "-std=c11", "-I", tmp_path / "inc", "-DEXTRA=5", "-O0", src)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "7 5 201112\n"


def test_several_sources_are_linked_into_one_program(run_pyrsan, tmp_path):
    a = write(tmp_path, "main.c", '#include <stdio.h>\nint twice(int);\n'
              'int main(void) { printf("%d\\n", twice(21)); return 0; }\n')
    b = write(tmp_path, "lib.c", "#include <stdatomic.h>\natomic_int n;\n"
              "int twice(int v) { atomic_store(&n, v); return 2 * atomic_load(&n); }\n")
    proc = run_pyrsan("run", a, b)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "42\n"


def test_cpp_program_with_std_thread(run_pyrsan, tmp_path):
    src = write(tmp_path, "app.cpp", textwrap.dedent("""\
        #include <atomic>
        #include <cstdio>
        #include <thread>
        std::atomic<int> counter{0};
        int main() {
          std::thread a([] { for (int i = 0; i < 50; i++) counter.fetch_add(1); });
          std::thread b([] { for (int i = 0; i < 50; i++) counter.fetch_add(1); });
          a.join();
          b.join();
          std::printf("%d\\n", counter.load());
        }
        """))
    proc = run_pyrsan("run", src)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "100\n"


def test_build_makes_a_binary_that_reports_by_itself(run_pyrsan, tmp_path):
    src = write(tmp_path, "viol.c", VIOLATION_C)
    exe = tmp_path / "viol"
    proc = run_pyrsan("build", src, "-o", exe)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    env = {k: v for k, v in os.environ.items() if k != "PYRSAN_OPTIONS"}
    alone = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
    assert alone.returncode == 66, alone.stderr
    assert "WARNING: pyrsan" in alone.stderr and "viol.c" in alone.stderr


def test_build_of_a_clean_program_runs_clean(run_pyrsan, tmp_path):
    src = write(tmp_path, "clean.c", CLEAN_C)
    exe = tmp_path / "clean"
    assert run_pyrsan("build", src, "-o", exe).returncode == 0
    env = {k: v for k, v in os.environ.items() if k != "PYRSAN_OPTIONS"}
    alone = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
    assert alone.returncode == 0 and alone.stdout == "counter=200\n", alone.stderr


def test_keep_temps_keeps_the_intermediate_files(run_pyrsan, tmp_path):
    src = write(tmp_path, "clean.c", "int main(void) { return 0; }\n")
    proc = run_pyrsan("run", "--keep-temps", src)
    assert proc.returncode == 0, proc.stderr
    kept = [line for line in proc.stderr.splitlines() if "temporary files kept in" in line]
    assert kept
    directory = kept[0].rsplit(" ", 1)[1]
    try:
        names = os.listdir(directory)
        # clang's IR (bitcode, or text when clang -O1 runs the pipeline: pyrsan/build.py)
        ir = [n for n in names if n.endswith(".bc") or (n.endswith(".ll") and not n.endswith(".rsan.ll"))]
        assert ir and any(n.endswith(".rsan.o") for n in names)
    finally:
        import shutil
        shutil.rmtree(directory, ignore_errors=True)


def test_typo_in_user_pyrsan_options_is_a_usage_error(run_pyrsan, tmp_path):
    src = write(tmp_path, "clean.c", "int main(void) { return 0; }\n")
    proc = run_pyrsan("run", src, env={"PYRSAN_OPTIONS": "halt_on_eror=1"})
    assert proc.returncode == 2
    assert "halt_on_eror" in one_line(proc.stderr)


def test_drivers_print_reports_wins_over_the_users(run_pyrsan, tmp_path):
    src = write(tmp_path, "viol.c", VIOLATION_C)
    out = tmp_path / "out.json"
    proc = run_pyrsan("run", "--json", out, src, env={"PYRSAN_OPTIONS": "print_reports=1"})
    assert proc.returncode == 66, proc.stderr
    # the runtime stays quiet; the driver prints each distinct report exactly once
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith("WARNING: pyrsan")]
    assert len(warnings) == len(json.loads(out.read_text())["reports"])


def test_sc_accesses_flag_reaches_the_runtime(run_pyrsan, tmp_path):
    # The same shape with seq_cst accesses: never reported in the default `fenced` model,
    # reported (seq_cst read as acquire/release, as in RSAN) with --sc-accesses ra.
    seq_cst = VIOLATION_C.replace("memory_order_release", "memory_order_seq_cst").replace(
        "memory_order_acquire", "memory_order_seq_cst")
    src = write(tmp_path, "sbsc.c", seq_cst)
    out = tmp_path / "out.json"
    fenced = run_pyrsan("run", "--json", out, src)
    assert fenced.returncode == 0, fenced.stderr
    ra = run_pyrsan("run", "--sc-accesses", "ra", "--json", out, src)
    assert ra.returncode == 66, ra.stderr
    assert all("sc_accesses=ra" in rep["model"] for rep in json.loads(out.read_text())["reports"])


def test_sigterm_to_pyrsan_kills_the_running_program(pyrsan_cli, pyrsan_env, tmp_path):
    import signal
    import time

    pidfile = tmp_path / "pid"
    src = write(tmp_path, "hang.c", textwrap.dedent(f"""\
        #include <stdio.h>
        #include <unistd.h>
        int main(void) {{
          FILE *f = fopen("{pidfile}", "w");
          fprintf(f, "%d\\n", (int)getpid());
          fclose(f);
          for (;;) pause();
        }}
        """))
    proc = subprocess.Popen([*pyrsan_cli, "run", str(src)], env=pyrsan_env,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.1)
    program_pid = int(pidfile.read_text())
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "pyrsan: interrupted" in stderr
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.kill(program_pid, 0)

"""A small multi-directory C/C++ project built with the compiler wrappers in testsuite/ci:
a static library with a non-robust function (lib/), a shared library with another one
(shlib/), a C++ helper and a test binary (tests/), with a Makefile and a CMakeLists.txt."""

from __future__ import annotations

import os
import stat
import sys
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent

# A deterministic robustness violation (as in testsuite/driver/test_cli.py): the second
# thread waits for the first with a relaxed flag (no happens-before), then reads X with
# acquire; SC forces it to see X = 1, C11 lets it see the initial 0. Reported on the line
# marked "VIOLATION".
_SB = """\
    #include <pthread.h>
    #include <stdatomic.h>
    #include "{header}"
    static atomic_int X, Y, done;
    static int r1, r2;
    static void *first(void *arg) {{
      atomic_store_explicit(&X, 1, memory_order_release);
      r1 = atomic_load_explicit(&Y, memory_order_acquire);
      atomic_store_explicit(&done, 1, memory_order_relaxed);
      return arg;
    }}
    static void *second(void *arg) {{
      while (!atomic_load_explicit(&done, memory_order_relaxed)) {{}}
      atomic_store_explicit(&Y, 1, memory_order_release);
      r2 = atomic_load_explicit(&X, memory_order_acquire); /* VIOLATION */
      return arg;
    }}
    int {function}(void) {{
      pthread_t a, b;
      pthread_create(&a, 0, first, 0);
      pthread_create(&b, 0, second, 0);
      pthread_join(a, 0);
      pthread_join(b, 0);
      return r1 + r2;
    }}
    """

FILES = {
    "lib/spin.h": "int lib_handoff(void);\n",
    "lib/spin.c": _SB.format(header="spin.h", function="lib_handoff"),
    "lib/count.c": textwrap.dedent("""\
        #include <stdatomic.h>
        static atomic_long hits;
        long lib_count(void) { return atomic_fetch_add(&hits, 1) + 1; }
        """),
    "shlib/shared.h": "int shared_handoff(void);\n",
    "shlib/shared.c": _SB.format(header="shared.h", function="shared_handoff"),
    "tests/helper.cpp": textwrap.dedent("""\
        #include <atomic>
        static std::atomic<int> ready{0};
        extern "C" int cxx_helper(void) { ready.store(1); return ready.load(); }
        """),
    "tests/plain.c": "int plain_value(void) { return 7; }\n",
    "tests/dl_main.c": textwrap.dedent("""\
        #include <dlfcn.h>
        #include <stdio.h>
        int main(int argc, char **argv) {
          void *h = dlopen(argc > 1 ? argv[1] : "shlib/libshared.so", RTLD_NOW);
          if (!h) { fprintf(stderr, "dlopen: %s\\n", dlerror()); return 1; }
          int (*f)(void) = (int (*)(void))dlsym(h, "shared_handoff");
          printf("dl_main: %d\\n", f ? f() : -1);
          return 0;
        }
        """),
    "tests/test_main.c": textwrap.dedent("""\
        #include <stdio.h>
        #include "spin.h"
        #include "shared.h"
        long lib_count(void);
        int cxx_helper(void);
        int plain_value(void);
        int main(void) {
          int r = lib_handoff() + shared_handoff();
          printf("test_main: %d %ld %d %d\\n", r, lib_count(), cxx_helper(), plain_value());
          return 0;
        }
        """),
    # tests/plain.c is compiled by the plain compiler: uninstrumented objects link in.
    "Makefile": textwrap.dedent("""\
        CC ?= cc
        CXX ?= c++
        PLAIN_CC ?= cc
        CFLAGS = -O1 -g -fPIC -Ilib -Ishlib
        all: tests/test_main tests/dl_main
        tests/dl_main: tests/dl_main.c
        \t$(CC) -O1 -g $< -o $@ -ldl
        lib/%.o: lib/%.c
        \t$(CC) $(CFLAGS) -MMD -MP -c $< -o $@
        shlib/shared.o: shlib/shared.c
        \t$(CC) $(CFLAGS) -MD -MF shlib/shared.dep -MT shlib/shared.o -c $< -o $@
        lib/libspin.a: lib/spin.o lib/count.o
        \tar rcs $@ $^
        shlib/libshared.so: shlib/shared.o
        \t$(CC) -shared -o $@ $^
        tests/helper.o: tests/helper.cpp
        \t$(CXX) -O1 -g -c $< -o $@
        tests/plain.o: tests/plain.c
        \t$(PLAIN_CC) -O1 -c $< -o $@
        tests/test_main.o: tests/test_main.c
        \t$(CC) $(CFLAGS) -c $< -o $@
        tests/test_main: tests/test_main.o tests/helper.o tests/plain.o lib/libspin.a shlib/libshared.so
        \t$(CXX) tests/test_main.o tests/helper.o tests/plain.o @tests/link.rsp -o $@
        """),
    # A response file, as build systems write for long link lines.
    "tests/link.rsp": "lib/libspin.a -Lshlib -lshared '-Wl,-rpath,$ORIGIN/../shlib'\n",
    "CMakeLists.txt": textwrap.dedent("""\
        cmake_minimum_required(VERSION 3.16)
        project(ciproject C CXX)
        enable_testing()
        add_library(spin STATIC lib/spin.c lib/count.c)
        target_include_directories(spin PUBLIC lib)
        add_library(shared SHARED shlib/shared.c)
        target_include_directories(shared PUBLIC shlib)
        add_executable(test_main tests/test_main.c tests/helper.cpp tests/plain.c)
        target_link_libraries(test_main spin shared)
        add_test(NAME handoff COMMAND test_main)
        """),
}


def write_project(root: Path) -> Path:
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def violation_line(name: str) -> int:
    text = FILES[name]
    return next(i for i, line in enumerate(text.splitlines(), 1) if "VIOLATION" in line)


def write_wrappers(bin_dir: Path) -> dict[str, str]:
    """pyrsan-cc / pyrsan-c++ scripts running this checkout (installed or not)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, language in (("pyrsan-cc", "cc"), ("pyrsan-c++", "c++")):
        path = bin_dir / name
        path.write_text(
            "#!/bin/sh\n"
            f"PYTHONPATH='{REPO_ROOT}'${{PYTHONPATH:+:$PYTHONPATH}} "
            f"exec '{sys.executable}' -m pyrsan.wrappers {language} \"$@\"\n"
        )
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        paths[name] = str(path)
    return paths


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYRSAN_OPTIONS", None)
    env.pop("PYRSAN_CC", None)
    env.pop("MAKEFLAGS", None)
    env.update(extra or {})
    return env

#!/usr/bin/env bash
# Sets up pyrsan on a Debian 12 machine (run as root, from the repository root or anywhere):
#   - apt: clang-22 libclang-rt-22-dev llvm-22 cmake, graphviz (dot: pyrsan --graph),
#     librsvg2-bin (rsvg-convert: the tests render the SVG pictures to PNG) and clang-format-22
#     (scripts/check_format.sh), only when missing;
#   - pip: this package, editable, with its test extra (pytest, pytest-xdist, hypothesis) and its dev extra
#     (ruff, mypy: scripts/lint.sh).
# Uses $PYTHON (default python3). Idempotent: a second run installs nothing new.
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

missing=()
command -v clang-22 >/dev/null 2>&1 || missing+=(clang-22)
command -v llvm-symbolizer-22 >/dev/null 2>&1 || missing+=(llvm-22)
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v clang-format-22 >/dev/null 2>&1 || missing+=(clang-format-22)
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
command -v rsvg-convert >/dev/null 2>&1 || missing+=(librsvg2-bin)
compgen -G "/usr/lib/llvm-22/lib/clang/*/lib/*/libclang_rt.tsan*.a" >/dev/null || missing+=(libclang-rt-22-dev)
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]} with apt-get" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: need root for apt-get install ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Debian's own python3 refuses pip installs outside a venv (PEP 668) unless told otherwise.
pip_flags=()
if "$PYTHON" -c 'import sys, sysconfig, os; sys.exit(0 if sys.prefix == sys.base_prefix and os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)'; then
  pip_flags+=(--break-system-packages)
fi
"$PYTHON" -m pip install -q "${pip_flags[@]}" -e '.[test,dev]'
echo "setup: done ($("$PYTHON" -m pyrsan --version))" >&2

#!/usr/bin/env bash
# The static checks CI runs before the tests (bash .ci/run), from the repository root:
#   - ruff: pyproject.toml [tool.ruff] (E, F, W at 120 columns), the whole tree;
#   - mypy: pyproject.toml [tool.mypy] (pyrsan/ and passes/);
#   - clang-format: the runtime's C against .clang-format (scripts/check_format.sh; `--fix`
#     rewrites the files).
# Uses $PYTHON (default python3). Exits non-zero at the first check that fails.
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

echo "lint: ruff" >&2
"$PYTHON" -m ruff check --no-cache --quiet .
echo "lint: mypy" >&2
"$PYTHON" -m mypy --no-incremental --cache-dir=/dev/null
echo "lint: clang-format" >&2
bash scripts/check_format.sh

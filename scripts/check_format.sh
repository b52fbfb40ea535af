#!/usr/bin/env bash
# clang-format on the runtime's C (runtime/src, runtime/include) against .clang-format.
#   bash scripts/check_format.sh          lists the files that differ, exits 1 if any does
#   bash scripts/check_format.sh --fix    rewrites them in place
# Uses $CLANG_FORMAT (default clang-format-22: the style options depend on the version).
set -euo pipefail

cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format-22}
if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
  echo "check_format: $CLANG_FORMAT not found (scripts/setup.sh installs clang-format-22)" >&2
  exit 2
fi
files=(runtime/include/*.h runtime/src/*.c runtime/src/*.h)
if [ "${1:-}" = --fix ]; then
  exec "$CLANG_FORMAT" -i "${files[@]}"
fi
# --dry-run -Werror: one warning per changed region, exit status 1 when any file would change
exec "$CLANG_FORMAT" --dry-run -Werror --ferror-limit=3 "${files[@]}"

#!/usr/bin/env bash
# Optional part: `--cluster ADDRESS` (Dask). Installs pyrsan with its "cluster" extra
# (distributed) on top of scripts/setup.sh; run it on the driver machine and on every
# worker machine. Without it, --cluster says what to install and the cluster tests skip.
set -euo pipefail

cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
bash scripts/setup.sh
pip_flags=()
if "$PYTHON" -c 'import sys, sysconfig, os; sys.exit(0 if sys.prefix == sys.base_prefix and os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)'; then
  pip_flags+=(--break-system-packages)
fi
"$PYTHON" -m pip install -q "${pip_flags[@]}" -e '.[test,cluster]'
echo "setup-cluster: done ($("$PYTHON" -c 'import distributed; print("distributed", distributed.__version__)'))" >&2

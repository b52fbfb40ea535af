#!/bin/sh
# The real-code corpus of issue 14 (benchmarks/realworld/README.md): Debian packages whose
# headers the drivers include. Drivers whose package is missing are skipped by run.py.
set -e
apt-get install -y --no-install-recommends libck-dev liburcu-dev libboost-dev libtbb-dev \
    libatomic-ops-dev libconcurrentqueue-dev libreaderwriterqueue-dev

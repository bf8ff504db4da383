#!/usr/bin/env bash
# The main job: installs what is missing, builds if needed, and compares every resampling scheme
# (`resample compare`, with its defaults unless other flags are given).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >&2
if [ ! -f build/CMakeCache.txt ]; then cmake -S . -B build >/dev/null; fi
cmake --build build -j "$(nproc)" >&2
exec build/bin/resample compare "$@"

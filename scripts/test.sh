#!/usr/bin/env bash
# The test command: installs what is missing, builds (build/), runs the whole test suite with ctest.
# GPU tests skip, with the reason, on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -DRESAMPLE_WERROR=ON >/dev/null
cmake --build build -j "$(nproc)"
ctest --test-dir build --output-on-failure -j "$(nproc)"

#!/usr/bin/env bash
# Session 39, run 18: fast_moves_test with its new edge-word case (built on the development machine,
# Release, sm_90, in .ab/fm/bin), and memcheck on it.
python3 -c "import tarfile; tarfile.open('.ab/b8.tar.xz').extractall('.')"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/fm source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
timeout 120 "$build/bin/fast_moves_test" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED|     OK) |tests? ran|Failure|Expected|Which|a [0-9]' | head -40 | tee "$out/tests.txt"
run_sanitizer memcheck fast_moves_test '*EdgeWords*' 120 | tee "$out/sanitizers.txt"

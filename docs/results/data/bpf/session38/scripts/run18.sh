#!/usr/bin/env bash
# Session 38, run 18 (the reread's mends, in .ab/rr/bin): the tests they touched, and memcheck on the
# fast filter's usual cases.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/rr source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
{
  for t in fast_moves_test bpf_cuda_fast_test bpf_cuda_test; do echo "== $t"; run_gtest "$t" 240; done
  echo "== ptx_backend_test RepeatedCallsGiveTheSameBits"
  timeout 120 "$build/bin/ptx_backend_test" --gtest_filter='*RepeatedCallsGiveTheSameBits' 2>&1 | grep -E '^\[  (PASSED|FAILED)|Failure' -A3
  run_sanitizer memcheck bpf_cuda_fast_test '*BlockCount*:*GatedRunsAreReproducible:*Refuses*' 200
  run_sanitizer racecheck bpf_cuda_fast_test '*GatedRunsAreReproducible' 200
} 2>&1 | tee "$out/tests_run18.txt"

#!/usr/bin/env bash
# Session 38, run 10 (final code, faa980e; binaries built on the development machine,
# Release, sm_90, in .ab/final/bin): the filter's GPU tests and the backends' tests that capture calls
# in graphs (launch_early now records programmatic edges while captured), then memcheck, racecheck and
# synccheck on the filter tests' usual cases and on the captured-call cases.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/final source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
for t in fast_moves_test bpf_cuda_fast_test bpf_cuda_test cuda_backend_test ptx_backend_test; do
  start=$SECONDS
  timeout 240 "$build/bin/$t" >"$out/${t}_run10.txt" 2>&1
  echo "$t rc=$? $((SECONDS - start)) s $(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED \]' "$out/${t}_run10.txt" | tr '\n' ' ')"
  grep -E '^\[  FAILED|Failure' -A3 "$out/${t}_run10.txt" | head -20
done
captured='*Captured*:*DeviceStep*:*DeviceGate*'
{
  for tool in memcheck racecheck synccheck; do
    for t in bpf_cuda_fast_test bpf_cuda_test; do
      run_sanitizer "$tool" "$t" "$(sanitizer_filter "$tool" "$t")" 150
    done
    run_sanitizer "$tool" bpf_cuda_test "$(sanitizer_filter "$tool" bpf_cuda_test ptx)" 150
    run_sanitizer "$tool" cuda_backend_test "$captured" 150
    run_sanitizer "$tool" ptx_backend_test "$captured" 150
  done
} 2>&1 | tee "$out/sanitizers_run10.txt"

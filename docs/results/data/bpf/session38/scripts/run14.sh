#!/usr/bin/env bash
# Session 38, run 14 (the review's mends and filter_options::fast_blocks, in .ab/final2/bin): the
# filter tests, memcheck on the new test and the fast filter's usual cases, and the fast tick's rows.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/final2 source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in bpf_cuda_fast_test bpf_cuda_test; do
  timeout 240 "$build/bin/$t" >"$out/${t}_run14.txt" 2>&1
  echo "$t rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' "$out/${t}_run14.txt" | tr '\n' ' ')"
  grep -E '^\[  FAILED|Failure' -A4 "$out/${t}_run14.txt" | head -20
done
{
  run_sanitizer memcheck bpf_cuda_fast_test '*BlockCount*:*GatedRunsAreReproducible:*Refuses*' 200
  run_sanitizer racecheck bpf_cuda_fast_test '*GatedRunsAreReproducible' 200
  run_sanitizer synccheck bpf_cuda_fast_test '*GatedRunsAreReproducible' 200
} 2>&1 | tee "$out/sanitizers_run14.txt"
"$build/bin/bench_bpf" --benchmark_filter='bpf/cuda-fast/(262144|16777216)/' --benchmark_min_time=0.1 \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -E '_median' |
  awk '{print $1, $2, $3, $NF}' | tee "$out/bench_run14.txt"

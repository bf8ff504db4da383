#!/usr/bin/env bash
# The PTX backend's GPU run, in one call (a subset of gpu_checks.sh, for sessions whose change is
# the PTX backend alone): build the PTX targets (Release, sm_90), ptx_backend_test,
# ptx_parity_test, bpf_cuda_test (the filter with the CUDA C and the PTX kernels), the command
# line's ptx checks, digests and the filter on GBP/USD against cpu, compute-sanitizer memcheck /
# racecheck / synccheck on the PTX tests and the PTX filter, bench_ptx and bench_bpf (cuda vs
# ptx). Logs under OUT.
#   usage: OUT=dir scripts/ptx_gpu_run.sh
source "$(dirname "$0")/gpu_common.sh"
log="$out/ptx_checks.txt"
{
  gpu_configure_and_build resample ptx_backend_test ptx_parity_test bpf_cuda_test cli_test bench_ptx bench_bpf
  for t in ptx_backend_test ptx_parity_test bpf_cuda_test; do
    echo "== $t"
    run_gtest "$t" 1800
  done
  echo "== cli_test --gtest_filter='*Ptx*'"
  "$build/bin/cli_test" --gtest_filter='*Ptx*' 2>&1 | grep -E '^\[  (PASSED|FAILED) |Failure' -A3 | head -20
  echo "== digests (5 draws, 20000 log-weights)"
  print_digests "systematic stratified multinomial multinomial-sorted residual ssp metropolis megopolis rejection" "cpu cuda ptx"
  echo "== the filter on GBP/USD (Pitt & Shephard's parameters, N = 2^16, Student-t 5/5 and auxiliary)"
  for extra in "" "--nu-state 5 --nu-obs 5 --filter auxiliary --scheme metropolis"; do
    for b in cpu cuda ptx; do
      # shellcheck disable=SC2086
      printf '%-5s %-60s %s\n' "$b" "$extra" "$("$build/bin/resample" bpf --model sv --data data/gbp_usd_1997_1999_returns.txt \
        --mu -1.02 --rho 0.9702 --sigma 0.178 --n 65536 --seed 3 --backend "$b" $extra --out "$out/bpf_$b" 2>&1 |
        grep -E '^(log_likelihood|us_per_tick|error)' | tr '\n' ' ')"
    done
  done
  echo "== compute-sanitizer"
  for tool in memcheck racecheck synccheck; do
    for t in ptx_backend_test ptx_parity_test bpf_cuda_test; do
      run_sanitizer "$tool" "$t" "$(sanitizer_filter "$tool" "$t" ptx)" 150
    done
  done
} >"$log" 2>&1
"$build/bin/bench_ptx" --benchmark_min_time=0.2 --benchmark_out="$out/bench_ptx.json" --benchmark_out_format=json \
  >"$out/bench_ptx.txt" 2>&1
"$build/bin/bench_bpf" --benchmark_filter='bpf/(cuda|ptx)/' --benchmark_min_time=0.2 \
  --benchmark_out="$out/bench_bpf_ptx.json" --benchmark_out_format=json >"$out/bench_bpf_ptx.txt" 2>&1

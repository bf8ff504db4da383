#!/usr/bin/env bash
# A CUDA-backend change's GPU run, in one call (a subset of gpu_checks.sh and run_gpu_benchmarks.sh,
# for sessions whose change is a few kernels): build the CUDA targets (Release, sm_90), the CUDA
# GPU tests, compute-sanitizer memcheck / racecheck / synccheck on the backend and parity tests
# (filtered as gpu_checks.sh does), the command line's digests on cpu and cuda, bench_cuda rows
# matching BENCH (a --benchmark_filter; 3 repetitions, medians), and Nsight Compute's instruction
# counts of the kernels matching KERNELS in the benchmark NCU_BENCH, and bench_bpf rows matching
# BPF_BENCH when given, and the per-kernel durations of the bench_cuda rows in KERNEL_TIMES. Logs
# under OUT.
#   usage: OUT=dir BENCH='cuda/(systematic|stratified)/' KERNELS='regex:comb_pass' \
#          NCU_BENCH='cuda/systematic/float/exact/16777216' scripts/cuda_focus_run.sh
source "$(dirname "$0")/gpu_common.sh"
log="$out/focus_checks.txt"
{
  gpu_configure_and_build resample cuda_backend_test cuda_parity_test cuda_backend_api_test bpf_cuda_test bench_cuda \
    ${BPF_BENCH:+bench_bpf}
  for t in cuda_backend_test cuda_parity_test cuda_backend_api_test bpf_cuda_test; do
    echo "== $t"
    run_gtest "$t" 300
  done
  echo "== compute-sanitizer"
  for tool in memcheck racecheck synccheck; do
    for t in cuda_backend_test cuda_parity_test; do
      run_sanitizer "$tool" "$t" "$(sanitizer_filter "$tool" "$t")" 120
    done
  done
  echo "== digests (5 draws, 20000 log-weights)"
  print_digests "systematic stratified multinomial-sorted" "cpu cuda"
} >"$log" 2>&1
"$build/bin/bench_cuda" --benchmark_filter="${BENCH:-cuda/(systematic|stratified|copy)/}" --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true >"$out/bench_focus.txt" 2>&1
if [ -n "${BPF_BENCH:-}" ]; then  # the filter's tick, e.g. BPF_BENCH='bpf/cuda/16777216'
  "$build/bin/bench_bpf" --benchmark_filter="$BPF_BENCH" >"$out/bench_bpf_focus.txt" 2>&1
fi
if [ -n "${KERNEL_TIMES:-}" ]; then  # space-separated bench_cuda filters, e.g. 'cuda/systematic/float/exact/16777216'
  read -ra kernel_time_filters <<<"$KERNEL_TIMES"  # split on spaces, never globbed
  kernel_times_from "${kernel_time_filters[@]}"
fi
if [ -n "${KERNELS:-}" ]; then
  ncu_instruction_counts "$KERNELS" "${LAUNCHES:-1}" "${NCU_BENCH:?KERNELS needs NCU_BENCH, a bench_cuda filter}"
fi

#!/usr/bin/env bash
# Session 39, run 13: options::device_max_log_weight (binaries built on the development machine,
# Release, sm_90: .ab/max = the working tree over 578ebca; .ab/base = db2129c's bench_cuda,
# .ab/pair = the ticks in pairs without the option, .ab/head = 72722ae's bench_bpf): every GPU test,
# the sanitizers on the option's cases, and A/B timings.
python3 -c "import tarfile; tarfile.open('.ab/b4.tar.xz').extractall('.')"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p .ab/maxb && ln -sfn ../max .ab/maxb/bin
BUILD=.ab/maxb source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for t in cuda_backend_test ptx_backend_test cuda_parity_test bpf_cuda_test bpf_cuda_fast_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED) |tests? ran|FAILED  \]|Failure|error' | head -20
done 2>&1 | tee "$out/tests.txt"
comb='*sv_bootstrap_ess_systematic_gated:*sv_bootstrap_every_tick_stratified_gated:*sv_bootstrap_multinomial_sorted_gated'
{
  for tool in memcheck racecheck synccheck; do
    run_sanitizer "$tool" cuda_backend_test '*GivenMax*:*DeviceGate*' 200
    run_sanitizer "$tool" bpf_cuda_test "$comb" 200
  done
  run_sanitizer memcheck bpf_cuda_fast_test "$(sanitizer_filter memcheck bpf_cuda_fast_test)" 200
} 2>&1 | tee "$out/sanitizers.txt"
f='cuda/(systematic|stratified|multinomial-sorted)/float/(exact|given_max)/(1048576|16777216|67108864)/'
for r in 1 2; do for v in base max; do
  .ab/$v/bench_cuda --benchmark_filter="$f" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $2, $3, $NF}'
done; done 2>&1 | tee "$out/ab_given_max_cuda.txt"
for r in 1 2 3; do for v in head pair max; do
  .ab/$v/bench_bpf --benchmark_filter='bpf/cuda-fast/(262144|16777216)/|bpf/cuda/16777216/' --benchmark_min_time=0.1 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $NF}'
done; done 2>&1 | tee "$out/ab_given_max_bpf.txt"

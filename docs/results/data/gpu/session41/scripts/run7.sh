#!/usr/bin/env bash
# Session 41, run 7: options::device_max_log_weight on the PTX backend (.ab/pgm: open_call.ptx,
# tile_sums.ptx and weight_statistics.ptx take and check the max; the filter's PTX resampler takes
# finish_tick's above 4096 particles) against the final code before it (.ab/final, 743c242): the
# PTX test programs and the filter's, compute-sanitizer on the new cases and on the filter's PTX
# cases, bench_ptx's systematic rows with and without the max, and the PTX filter tick alternated.
python3 -c "import tarfile; [tarfile.open(f).extractall('.') for f in ('.ab/b4.tar.xz', '.ab/b5.tar.xz')]"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/pgm source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/tests.txt"
for t in ptx_backend_test ptx_parity_test bpf_cuda_test bpf_cuda_fast_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' -A3 | head -30
done 2>&1 | tee -a "$out/tests.txt"
{
  for tool in memcheck racecheck synccheck; do
    run_sanitizer "$tool" ptx_backend_test 'PtxAncestors.GivenMaxGivesTheSameBitsAndIsChecked:PtxAncestors.BadInputAndUnsupportedCalls' 200
    run_sanitizer "$tool" bpf_cuda_test "$(sanitizer_filter "$tool" bpf_cuda_test ptx)" 200
  done
  run_sanitizer memcheck bpf_cuda_test '*ptx*' 200
} 2>&1 | tee "$out/sanitizers.txt"
"$build/bin/bench_ptx" --benchmark_filter='(ptx|cuda)/systematic(_given_max)?/(1048576|16777216)/' \
  --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 |
  grep -E 'median' | awk '{print $1, $2}' | tee "$out/bench_ptx_given_max.txt"
for r in 1 2; do for v in final pgm; do
  .ab/$v/bin/bench_bpf --benchmark_filter='bpf/ptx/(262144|16777216)/' --benchmark_min_time=0.1 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $NF}'
done; done | tee "$out/ab_bpf_ptx.txt"

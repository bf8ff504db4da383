#!/usr/bin/env bash
# Session 40, run 14: the final code (.ab/final, built on the development machine: the tile pass
# alone takes the exp through its underflow and the high words' double sum) against e96031d
# (.ab/base): the GPU test programs, bench_cuda's comb schemes and batched call alternated over two
# rounds, systematic's per-kernel times, then memcheck, racecheck and synccheck on the CUDA C
# backend's tests (sanitizer_filter's cases) and memcheck on the filter's.
python3 -c "import tarfile; [tarfile.open(f).extractall('.') for f in ('.ab/b1.tar.xz', '.ab/b4.tar.xz')]"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/final source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/tests.txt"
for t in core_device_test fast_moves_test cuda_parity_test cuda_backend_api_test cuda_backend_test bpf_cuda_test \
         bpf_cuda_fast_test ptx_backend_test ptx_parity_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' | head -20
done 2>&1 | tee -a "$out/tests.txt"
rows='cuda/(systematic|stratified|multinomial.sorted)/float/(exact|given_max)/(1048576|16777216)/|cuda/batched/(systematic|stratified)/|cuda/copy/16777216/'
for r in 1 2; do for v in base final; do
  .ab/$v/bin/bench_cuda --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $2}'
done; done | tee "$out/ab_cuda.txt"
TIMES_COUNT=10 kernel_times_from 'cuda/systematic/float/exact/16777216/'
{
  for tool in memcheck racecheck synccheck; do
    for t in cuda_backend_test cuda_parity_test; do
      s=$SECONDS; run_sanitizer "$tool" "$t" "$(sanitizer_filter "$tool" "$t")" 150; echo "   ($((SECONDS - s)) s)"
    done
  done
  s=$SECONDS; run_sanitizer memcheck bpf_cuda_test "$(sanitizer_filter memcheck bpf_cuda_test)" 150; echo "   ($((SECONDS - s)) s)"
} 2>&1 | tee "$out/sanitizers.txt"

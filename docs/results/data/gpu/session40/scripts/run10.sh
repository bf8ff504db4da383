#!/usr/bin/env bash
# Session 40, run 10: the tile arithmetic's two instructions fewer a weight (the exp's clamp to -746,
# the high words summed as doubles) in the library (.ab/lean, built on the development machine)
# against e96031d (.ab/base: bench_cuda, bench_bpf): every GPU test program, then bench_cuda's
# comb schemes and batched call alternated over three rounds, the fast tick, and bench_ptx's rows
# at 2^20 and 2^24 (both backends in one run).
python3 -c "import tarfile; tarfile.open('.ab/b1.tar.xz').extractall('.'); tarfile.open('.ab/b2.tar.xz').extractall('.')"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/lean source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/tests.txt"
for t in core_device_test fast_moves_test cuda_parity_test cuda_backend_api_test cuda_backend_test bpf_cuda_test \
         bpf_cuda_fast_test ptx_backend_test ptx_parity_test; do
  echo "== $t"; timeout 400 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' | head -20
done 2>&1 | tee -a "$out/tests.txt"
echo "== litmus" | tee -a "$out/tests.txt"; timeout 200 "$build/bin/litmus" 2>&1 | tail -4 | tee -a "$out/tests.txt"
rows='cuda/(systematic|stratified|multinomial.sorted)/float/(exact|given_max)/(1048576|16777216)/|cuda/batched/(systematic|stratified)/|cuda/copy/16777216/'
for r in 1 2 3; do for v in base lean; do
  .ab/$v/bin/bench_cuda --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $2}'
done; done | tee "$out/ab_cuda.txt"
for r in 1 2; do for v in base lean; do
  .ab/$v/bin/bench_bpf --benchmark_filter='bpf/(cuda|cuda-fast)/(262144|16777216)/' --benchmark_min_time=0.1 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $NF}'
done; done | tee "$out/ab_bpf.txt"
.ab/lean/bin/bench_ptx --benchmark_filter='/(1048576|16777216)/' --benchmark_min_time=0.1 --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true 2>&1 | grep median | awk '{print $1, $2}' | tee "$out/bench_ptx.txt"

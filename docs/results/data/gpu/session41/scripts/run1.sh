#!/usr/bin/env bash
# Session 41, run 1: options::fast_exp on the cuda backend. .ab/new: this session's build (built on
# the development machine); .ab/base: 5cc38f7's bench_cuda and bench_bpf. The GPU test programs,
# compute-sanitizer on the fast mode's cases (memcheck, racecheck, synccheck) and on the backend's
# usual cases, session 40's open risk (zero weights in the tile pass, a micro-benchmark), then
# bench_cuda's comb rows alternated with 5cc38f7 over two rounds.
python3 -c "import tarfile; tarfile.open('.ab/b1.tar.xz').extractall('.')"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/new source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/tests.txt"
for t in core_device_test fast_moves_test cuda_parity_test cuda_backend_api_test cuda_backend_test bpf_cuda_test \
         bpf_cuda_fast_test ptx_backend_test ptx_parity_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' -A3 | head -30
done 2>&1 | tee -a "$out/tests.txt"
{
  for tool in memcheck racecheck synccheck; do
    s=$SECONDS; run_sanitizer "$tool" ptx_backend_test 'CudaFastExp.SameBitsAsPtxFastExp:PtxFastExp.OtherBackendsAndSchemesRefuseIt' 200; echo "   ($((SECONDS - s)) s)"
    s=$SECONDS; run_sanitizer "$tool" cuda_backend_test "$(sanitizer_filter "$tool" cuda_backend_test)" 150; echo "   ($((SECONDS - s)) s)"
    s=$SECONDS; run_sanitizer "$tool" bpf_cuda_fast_test "$(sanitizer_filter "$tool" bpf_cuda_fast_test)" 150; echo "   ($((SECONDS - s)) s)"
  done
} 2>&1 | tee "$out/sanitizers.txt"
for p in 0 0.001 0.01 0.1 0.5; do .ab/zero_weights_mech 24 "$p"; done 2>&1 | tee "$out/zero_weights_mech.txt"
rows='cuda/(systematic|stratified|multinomial.sorted)/float/(exact|given_max|fast_exp|fast_given_max)/(1048576|16777216)/|cuda/copy/16777216/'
for r in 1 2; do for v in base new; do
  .ab/$v/bin/bench_cuda --benchmark_filter="$rows" --benchmark_min_time=0.1 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $2}'
done; done | tee "$out/ab_cuda.txt"

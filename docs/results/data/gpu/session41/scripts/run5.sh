#!/usr/bin/env bash
# Session 41, run 5: the final code (.ab/final, built on the development machine: run 1's fast mode
# with the comb's fast eps 2^-40 as PTX's, the filter's fast exp for systematic and stratified only
# and its refusal of a caller's fast_exp; the float-bits quantisation of run 4 not kept): every GPU
# test program, then memcheck, racecheck and synccheck on the fast mode's cases, cuda_backend_test's
# and the fast filter's usual cases, and memcheck on bpf_cuda_test's.
python3 -c "import tarfile; tarfile.open('.ab/b4.tar.xz').extractall('.')"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/final source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/tests.txt"
for t in core_device_test fast_moves_test cuda_parity_test cuda_backend_api_test cuda_backend_test bpf_cuda_test \
         bpf_cuda_fast_test ptx_backend_test ptx_parity_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' -A3 | head -30
done 2>&1 | tee -a "$out/tests.txt"
{
  for tool in memcheck racecheck synccheck; do
    run_sanitizer "$tool" ptx_backend_test 'CudaFastExp.SameBitsAsPtxFastExp:PtxFastExp.OtherBackendsAndSchemesRefuseIt' 200
    run_sanitizer "$tool" cuda_backend_test "$(sanitizer_filter "$tool" cuda_backend_test)" 150
    run_sanitizer "$tool" bpf_cuda_fast_test "$(sanitizer_filter "$tool" bpf_cuda_fast_test)" 150
  done
  run_sanitizer memcheck bpf_cuda_test "$(sanitizer_filter memcheck bpf_cuda_test)" 150
} 2>&1 | tee "$out/sanitizers.txt"

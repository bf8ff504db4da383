#!/usr/bin/env bash
# Session 39, run 15: run 14's test loop again (its tests.txt was the ninth file under OUT, and only
# eight come back), on the same binaries.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
ls .ab/final/bin >/dev/null 2>&1 || python3 -c "import tarfile; tarfile.open('.ab/b5.tar.xz').extractall('.')"
for t in core_device_test fast_moves_test cuda_parity_test cuda_backend_api_test cuda_backend_test bpf_cuda_test \
  bpf_cuda_fast_test ptx_backend_test ptx_parity_test; do
  echo "== $t"; timeout 300 .ab/final/bin/$t 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' | head -20
done 2>&1 | tee "$OUT/tests.txt"

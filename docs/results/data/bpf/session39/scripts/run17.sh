#!/usr/bin/env bash
# Session 39, run 17: the review's mends (the one-block path checks the given max when every weight
# is zero too; the filter never passes the caller's max; ticks_per_graph; more test cases), built on
# the development machine (Release, sm_90) in .ab/fix/bin; run 16 found its new test asserting the index of the
# log-weight above a max of -inf wrongly (0, not the largest), mended here: cuda_backend_test and
# compute-sanitizer on the changed cases.
python3 -c "import tarfile; tarfile.open('.ab/b7.tar.xz').extractall('.')"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/fix source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for t in cuda_backend_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' | head -20
done 2>&1 | tee "$out/tests.txt"
{
  for tool in memcheck racecheck synccheck; do
    run_sanitizer "$tool" cuda_backend_test '*GivenMax*' 200
  done
} 2>&1 | tee "$out/sanitizers.txt"

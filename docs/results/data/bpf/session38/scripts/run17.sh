#!/usr/bin/env bash
# Session 38, run 17 (8f9e595, the session's last code, in .ab/last/bin): the filter tests.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/last source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for t in bpf_cuda_fast_test bpf_cuda_test; do
  echo "== $t"; run_gtest "$t" 240
done 2>&1 | tee "$out/tests_run17.txt"

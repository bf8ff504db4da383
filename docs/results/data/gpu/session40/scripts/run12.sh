#!/usr/bin/env bash
# Session 40, run 12: per-kernel times (Nsight Compute at the GPU's own clocks) of systematic and
# stratified at 2^24 for e96031d (.ab/base), run 10's build (.ab/lean) and run 11's (.ab/lean2).
python3 -c "import tarfile; [tarfile.open(f).extractall('.') for f in ('.ab/b1.tar.xz', '.ab/b2.tar.xz', '.ab/b3.tar.xz')]"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
for v in base lean lean2; do
  BUILD=.ab/$v source scripts/gpu_common.sh
  TIMES_COUNT=10 TIMES_FILE=kernel_times_$v.txt kernel_times_from 'cuda/systematic/float/exact/16777216/' \
    'cuda/stratified/float/exact/16777216/'
done

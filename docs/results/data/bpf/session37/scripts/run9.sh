#!/usr/bin/env bash
# Session 37, run 9: is racecheck's stop on bpf_cuda_fast_test's OutlyingObservations case this
# session's? Session 36's binary (74be37a's fast_moves.cuh and bpf_filter.cu, in .ab/old36/bin),
# then the final one; the machine's kernel log.
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64; export PATH=$PATH:/usr/local/cuda/bin
for b in old36; do echo "== $b"; timeout 240 compute-sanitizer --tool racecheck --error-exitcode 99 .ab/$b/bin/bpf_cuda_fast_test --gtest_filter='*OutlyingObservations*' > $OUT/rc_$b.txt 2>&1; echo "rc=$?"; tail -8 $OUT/rc_$b.txt; done; timeout 120 compute-sanitizer --tool racecheck --error-exitcode 99 .ab/final/bin/bpf_cuda_fast_test --gtest_filter='*OutlyingObservations*' 2>&1 | tail -5; dmesg 2>/dev/null | tail -3; free -g | head -2

#!/usr/bin/env bash
# Session 39, runs 21 and 22, on run 20's machine (warm): the fast tick at 2^24 and systematic and
# the copy again, three times (run 21); then the reread's mends (.ab/mend) against c8b037b's
# binaries (.ab/final) alternately, three rounds (run 22).
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
ls .ab/final/bin >/dev/null 2>&1 || python3 -c "import tarfile; tarfile.open('.ab/b5.tar.xz').extractall('.')"
ls .ab/mend/bin >/dev/null 2>&1 || python3 -c "import tarfile; tarfile.open('.ab/b9.tar.xz').extractall('.')"
if [ "${1:-21}" = 21 ]; then
  for r in 1 2 3; do
    .ab/mend/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/16777216/' --benchmark_min_time=0.1 --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true 2>&1 | grep median | awk '{print $1, $NF}'
    .ab/mend/bin/bench_cuda --benchmark_filter='cuda/(systematic/float/exact|copy)/16777216/' --benchmark_min_time=0.1 \
      --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk '{print $1, $2, $3}'
  done | tee "$OUT/bench_repeat.txt"
else
  for r in 1 2 3; do for v in final mend; do
    .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/(262144|16777216)/' --benchmark_min_time=0.1 \
      --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $NF}'
  done; done | tee "$OUT/ab_mend.txt"
fi

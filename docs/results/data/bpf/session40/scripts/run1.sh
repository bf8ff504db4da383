#!/usr/bin/env bash
# Session 40, run 1: the pair's second particle kernel launched early (programmatic edge from the
# pair's first finish_tick, which lets it launch once it has waited for its own particle kernel;
# the particle kernel waits before it reads anything). .ab/early: that build; .ab/base: e96031d.
# Its tests, memcheck on the paired ticks, then the fast tick alternately, three rounds.
python3 -c "import tarfile; tarfile.open('.ab/b1.tar.xz').extractall('.')"
export LD_LIBRARY_PATH=$PWD/.ab:/usr/local/cuda/lib64
export PATH=$PATH:/usr/local/cuda/bin
BUILD=.ab/early source scripts/gpu_common.sh
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/tests.txt"
for t in bpf_cuda_fast_test bpf_cuda_test; do
  echo "== $t"; timeout 300 "$build/bin/$t" 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|Failure' | head -20
done 2>&1 | tee -a "$out/tests.txt"
run_sanitizer memcheck bpf_cuda_fast_test "$(sanitizer_filter memcheck bpf_cuda_fast_test)" 200 | tee "$out/sanitizers.txt"
for r in 1 2 3; do for v in base early; do
  .ab/$v/bin/bench_bpf --benchmark_filter='bpf/cuda-fast/(262144|16777216)/' --benchmark_min_time=0.1 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median | awk -v v=$v '{print v, $1, $NF}'
done; done | tee "$out/ab_early.txt"

#!/usr/bin/env bash
# The particle-filter benchmark behind docs/results/bpf.md, on the GPU machine after
# scripts/gpu_checks.sh built BUILD: bench_bpf (cuda with CUDA events, cpu-parallel on all cores),
# then the table and the plot (benchmarks/bpf_results.py).
#   usage: OUT=dir benchmarks/run_bpf_benchmarks.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
build=${BUILD:-build-gpu}
mkdir -p "$out"
if [ ! -x "$build/bin/bench_bpf" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" >/dev/null
  cmake --build "$build" -j "$(nproc)" --target bench_bpf >/dev/null
fi
timeout 240 "$build/bin/bench_bpf" --benchmark_min_time=0.1 --benchmark_out="$out/bench_bpf.json" \
  --benchmark_out_format=json ${BENCH_FILTER:+--benchmark_filter="$BENCH_FILTER"} >"$out/bench_bpf.txt" 2>&1
python3 benchmarks/bpf_results.py --bench "$out/bench_bpf.json" --out-dir "$out" >>"$out/bench_bpf.txt" 2>&1

#!/usr/bin/env bash
# The GPU benchmark run behind docs/results/gpu.md, in one call on the GPU machine: bench_cuda
# (CUDA events; every scheme, batched, graph replay, Metropolis vs B and y, copy bandwidth), then
# the peers (PyTorch, JAX, CuPy) in the same run on the same GPU, then the table and the plot.
#   usage: OUT=dir benchmarks/run_gpu_benchmarks.sh      (after scripts/gpu_checks.sh built BUILD)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
build=${BUILD:-build-gpu}
mkdir -p "$out"
if [ ! -x "$build/bin/bench_cuda" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" >/dev/null
  cmake --build "$build" -j "$(nproc)" --target bench_cuda >/dev/null
fi
timeout 200 "$build/bin/bench_cuda" --benchmark_min_time=0.1 --benchmark_out="$out/bench_cuda.json" \
  --benchmark_out_format=json ${BENCH_FILTER:+--benchmark_filter="$BENCH_FILTER"} >"$out/bench_cuda.txt" 2>&1
timeout 150 python3 benchmarks/peers.py --reps 30 --out "$out/peers.json" >>"$out/bench_cuda.txt" 2>/dev/null
python3 benchmarks/gpu_results.py --ours "$out/bench_cuda.json" --peers "$out/peers.json" --out-dir "$out"

#!/usr/bin/env bash
# The CPU benchmark run behind docs/results/cpu.md, in one call (made for the 16-core GPU machine,
# works anywhere): build (Release), run the test suite, print the exact backends' output digests
# (to compare bit for bit with another machine), time every scheme on `cpu` and `cpu-parallel`,
# and sweep the thread count at N = 2^24. Logs go to OUT (default: bench-out/).
#   usage: benchmarks/run_cpu_benchmarks.sh [extra cmake args, e.g. -DRandom123_INCLUDE_DIR=...]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench-out}
mkdir -p "$out"
jobs=$(nproc)

{ echo "date: $(date -u +%FT%TZ)"; echo "cores: $jobs"; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Socket|MHz' || true;
  g++ --version | head -1; } | tee "$out/machine.txt"

cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DRESAMPLE_ENABLE_CUDA=OFF "$@" >"$out/build.log" 2>&1
cmake --build build-bench -j "$jobs" >>"$out/build.log" 2>&1
ctest --test-dir build-bench -j "$jobs" 2>&1 | tail -3 | tee "$out/ctest.txt"

# The same bits everywhere: digests of 5 draws of every scheme on 20000 log-weights given as
# decimal text (parsed exactly), from the serial and the parallel exact backends.
lw=$(mktemp)
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "%d.%02d\n", -((i * 7919) % 1000) / 100, (i * 31) % 100 }' >"$lw"
for s in multinomial multinomial-sorted stratified systematic residual ssp metropolis megopolis rejection; do
  for b in cpu cpu-parallel; do
    printf '%-20s %-13s %s\n' "$s" "$b" \
      "$(build-bench/bin/resample ancestors --log --backend "$b" --scheme "$s" --reps 5 --seed 7 --input "$lw" | md5sum | cut -c1-32)"
  done
done | tee "$out/digests.txt"

# Every scheme and size (2^10, 2^12, 2^16, 2^20, 2^24); serial runs of the slow schemes stop at 2^20.
build-bench/bin/bench_cpu \
  --benchmark_filter='^cpu/[a-z-]+(/float32_cdf)?/(1024|4096|65536|1048576)$|^cpu/(systematic|stratified|residual|ssp)(/float32_cdf)?/16777216$|^cpu-parallel/' \
  --benchmark_out="$out/bench_cpu.json" --benchmark_out_format=json 2>&1 | tee "$out/bench_cpu.txt" | tail -5

# Speed-up against the thread count at N = 2^24.
for t in 1 2 4 8 16; do
  RESAMPLE_THREADS=$t build-bench/bin/bench_cpu \
    --benchmark_filter='^cpu-parallel/(systematic|stratified|multinomial|metropolis)/16777216/real_time$' 2>&1 |
    grep '^cpu' | sed "s/^/threads=$t /"
done | tee "$out/threads.txt"

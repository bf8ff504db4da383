#!/usr/bin/env bash
# Installs, with apt-get, whatever this machine lacks to build and test `resample`.
# Idempotent: packages already present are left alone, and nothing is fetched when none is missing.
set -euo pipefail

packages=(
  cmake g++ make
  python3               # cmake/inline_ptx.py: the build writes out the PTX calls marked // inline
  libboost-random-dev   # Boost.Random: the URBGs and distributions of cpu_reference/
  libgtest-dev          # GoogleTest (tests/)
  libbenchmark-dev      # Google Benchmark (benchmarks/)
  librandom123-dev      # Random123: counter-based Philox (exact core, later issues)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all build dependencies present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"

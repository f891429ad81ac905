#!/usr/bin/env bash
# The reduce benchmark of docs/PERFORMANCE.md: gpuk against CUB (and the CPU) in the same run.
# Usage: tools/bench/bench_reduce.sh BUILD_DIR [OUT_DIR]
set -euo pipefail
build=${1:-build}
out=${2:-.}
mkdir -p "$out"
for config in configs/argmax.yaml configs/argmax_large.yaml configs/vecmax.yaml; do
  name=$(basename "$config" .yaml)
  "$build/gpuk" run "$config" --json "$out/$name.json"
done

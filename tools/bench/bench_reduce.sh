#!/usr/bin/env bash
# The reduce benchmark of docs/PERFORMANCE.md: gpuk against CUB (and the CPU) in the same run.
# (argminmax at every size from 2^12 to 2^28, and max/min at 2^12: tools/bench/bench_argminmax.sh)
# Usage: tools/bench/bench_reduce.sh BUILD_DIR [OUT_DIR]
source "$(dirname "$0")/../dev/help.sh" "$@"
set -euo pipefail
build=${1:-build}
out=${2:-.}
mkdir -p "$out"
for config in configs/argmax.yaml configs/argmax_large.yaml configs/argminmax.yaml configs/vecmax.yaml; do
  name=$(basename "$config" .yaml)
  "$build/gpuk" run "$config" --json "$out/$name.json"
done

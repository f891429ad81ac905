#!/usr/bin/env bash
# The search benchmark of docs/PERFORMANCE.md: gpuk against thrust::find / thrust::count (and the
# CPU) in the same run. The two configs as committed, then the same data with the value in the
# middle (early exit), any and count, and the write-up's kernels on both sizes.
# Usage: tools/bench/bench_search.sh BUILD_DIR [OUT_DIR]
set -euo pipefail
build=${1:-build}
out=${2:-.}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {  # NAME CONFIG
  echo "== $1"
  "$build/gpuk" run "$2" --json "$out/$1.json"
}

# variant BASE NAME "key: value" ...: BASE with each given top-level key replaced or added.
variant() {
  local base=$1 name=$2
  shift 2
  cp "$base" "$tmp/$name.yaml"
  for kv in "$@"; do
    local key=${kv%%:*}
    grep -v "^$key:" "$tmp/$name.yaml" > "$tmp/$name.tmp" || true
    echo "$kv" >> "$tmp/$name.tmp"
    mv "$tmp/$name.tmp" "$tmp/$name.yaml"
  done
  echo "$tmp/$name.yaml"
}

run search configs/search.yaml
run search_large configs/search_large.yaml
run search_large_middle "$(variant configs/search_large.yaml search_large_middle 'value_at: middle')"
run search_large_any_middle "$(variant configs/search_large.yaml search_large_any_middle 'operation: any' 'value_at: middle')"
run search_large_count "$(variant configs/search_large.yaml search_large_count 'operation: count' 'value_at: middle')"

# The write-up's four, made correct (its chart: 500,000 int32, K = 1..64; its best was K = 12).
for size in small large; do
  base=configs/search.yaml
  [ "$size" = large ] && base=configs/search_large.yaml
  run "writeup_${size}_per_element" "$(variant "$base" "w_${size}_pe" 'kernel: per_element' 'params: {BLOCK: 256}')"
  for kernel in strided coalesced coalesced_unrolled; do
    run "writeup_${size}_${kernel}_K12" \
      "$(variant "$base" "w_${size}_${kernel}" "kernel: $kernel" 'params: {K: 12, BLOCK: 256}')"
  done
done

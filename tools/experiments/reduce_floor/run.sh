#!/usr/bin/env bash
# Where the time of a 250,000-element argmax goes (docs/PERFORMANCE.md, "Where the 250,000 time
# goes"): drop-in reduce kernels that do part of the work, timed like every gpuk kernel, on the
# input of configs/argmax.yaml. Only x_ticket1 and x_packed are correct reductions (x_packed only
# for NaN-free float data); the others exist to measure a floor, and fail verification by design.
# Usage: tools/experiments/reduce_floor/run.sh BUILD_DIR
source "$(dirname "$0")/../../dev/help.sh" "$@"
set -u
build=${1:-build}
here=$(dirname "$0")
tmp=$(mktemp -d)
for k in x_empty x_loadonly x_ticket1 x_ticket0 x_packed; do
  sed "s/^kernel: .*/kernel: $k/; s/^params: .*/params: {BLOCK: 256}/; s/^repeats: .*/repeats: 3000/" \
    configs/argmax.yaml > "$tmp/$k.yaml"
  "$build/gpuk" --kernels "$here" run "$tmp/$k.yaml" > "$tmp/$k.txt" 2>&1
  echo "$k: $(grep -E 'kernel:|baseline:|verify' "$tmp/$k.txt" | tr -s ' ' | tr '\n' '|')"
done
rm -rf "$tmp"

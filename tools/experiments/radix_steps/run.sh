#!/usr/bin/env bash
# The steps of the radix sort of 2026-11-23 (docs/PERFORMANCE.md, "What moved the radix
# sort"): gpuk tune over 2^28 uint32 keys and 2^26 uint32 pairs, every variant
# verified, for the radix.cu (commit acdc0a9, as radix3), radix_lb (its look-back
# polling one entry) and radix_ec (plus CUB's early-counts ranking). radix_lb and radix_ec are
# kept as patches against that radix.cu (radix_lb.patch, radix_ec.patch). The later rows of the table
# are the committed radix.cu: gpuk tune configs/tune_sort.yaml and configs/tune_sort_pairs.yaml.
# Usage: tools/experiments/radix_steps/run.sh BUILD_DIR   (from the repository root, on a GPU)
source "$(dirname "$0")/../../dev/help.sh" "$@"
set -u
build=${1:-build}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/sort"
git show acdc0a9:kernels_src/sort/radix.cu > "$tmp/sort/radix3.cu"
for k in radix_lb radix_ec; do patch -s -o "$tmp/sort/$k.cu" "$tmp/sort/radix3.cu" < "$here/$k.patch"; done
space() {  # OPERATION SIZE BLOCKS ITEMS MIN_BLOCKS REPEATS
  printf 'family: sort\noperation: %s\ndtype: uint32\nsize: %s\ndata: {generator: uniform, low: 0, high: 4294967295, seed: 1}\nkernels: [radix3, radix_lb, radix_ec]\nparams:\n  BLOCK: %s\n  ITEMS: %s\n  MIN_BLOCKS: %s\n  RADIX_BITS: [8]\n  SMALL: [1]\nwarmup: 2\nrepeats: %s\nrecheck: {top: 6, repeats: %s}\n' "$@" "$(( $6 * 2 ))"
}
space sort 2^28 "[256, 384]" "[16, 20]" "[2, 4]" 10 > "$tmp/keys.yaml"
space sort_pairs 2^26 "[256, 512]" "[12, 16, 20]" "[2]" 20 > "$tmp/pairs.yaml"
for c in keys pairs; do
  echo "== $c"
  "$build/gpuk" --kernels "$tmp" tune "$tmp/$c.yaml" --no-save --show 12
done

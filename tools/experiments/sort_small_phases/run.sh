#!/usr/bin/env bash
# Where rank_bucket's time goes at 256 and 4,096 keys (docs/PERFORMANCE.md, "The small sort,
# 2^12"): rb_probe stops after phase STOP; timed like every gpuk kernel, CUB in the same run.
# Only STOP = 4 is verified (the others write placeholders). rb_probe is kept as a patch against
# rank_bucket.cu as of commit 6e4801a (rb_probe.patch).
# Usage: tools/experiments/sort_small_phases/run.sh BUILD_DIR   (from the repository root, on a GPU)
source "$(dirname "$0")/../../dev/help.sh" "$@"
set -u
build=${1:-build}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/kernels/sort"
git show 6e4801a:kernels_src/sort/rank_bucket.cu > "$tmp/rank_bucket.cu"
patch -s -o "$tmp/kernels/sort/rb_probe.cu" "$tmp/rank_bucket.cu" < "$here/rb_probe.patch"
for n in 256 4096; do
  for block in 256 1024; do
    for stop in 0 1 2 3 4; do
      verify=false
      [ $stop = 4 ] && verify=true
      printf 'family: sort\noperation: sort\nkernel: rb_probe\nparams: {BLOCK: %s, STOP: %s}\ndtype: uint32\nsize: %s\ndata: {generator: uniform, low: 0, high: 4294967295, seed: 1}\nwarmup: 20\nrepeats: 300\ncpu_repeats: 1\nverify: %s\n' \
        "$block" "$stop" "$n" "$verify" > "$tmp/p.yaml"
      "$build/gpuk" --kernels "$tmp/kernels" run "$tmp/p.yaml" > "$tmp/p.txt" 2>&1
      echo "n=$n BLOCK=$block STOP=$stop: $(grep -E 'kernel:|baseline:|verify' "$tmp/p.txt" | tr -s ' ' | tr '\n' '|')"
    done
  done
done

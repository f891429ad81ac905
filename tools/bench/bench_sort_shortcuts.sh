#!/usr/bin/env bash
# onesweep's one-digit shortcuts (SHORT, SKIP: docs/kernels/sort.md) on the default path, per
# input kind, against CUB in the same run (docs/PERFORMANCE.md, "Sort: input kinds"): for each
# SHORT/SKIP setting, a copy of the build whose kernel directory holds kernels_src/ with
# onesweep.cu's two defaults set so, then tools/bench/bench_defaults.sh on it; every answer
# verified. Shipped entries that name no SHORT or SKIP (the H100's) take these defaults; the
# H200's entries from configs/tune_matrix_sort_kinds.yaml name them, so there this compares the
# settings only in the cells those entries do not cover. One table per setting (bench_defaults.sh's, with each case's worst ratio over the
# kinds), in OUT_DIR/SHORT-SKIP.txt.
# Usage: tools/bench/bench_sort_shortcuts.sh BUILD_DIR [OUT_DIR]
#   SETTINGS="0/0 0/1 1/1": the SHORT/SKIP pairs (default those three)
#   SIZES, ONLY, KINDS: as bench_defaults.sh's (defaults here: 24; the ascending cases of keys of
#     uint32, float32, int64, pairs of uint32 and float32, argsort of uint32, float32, int64;
#     uniform d16 d1024 labels sorted reversed normal). At 2^24 one setting takes about 1.5 min
#     on an H200.
source "$(dirname "$0")/../dev/help.sh" "$@"
set -uo pipefail
build=$(cd "${1:-build}" && pwd)
out=${2:-bench-sort-shortcuts}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
source_kernels=$(cd "$here/../../kernels_src" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export SIZES=${SIZES:-24}
export KINDS=${KINDS:-uniform d16 d1024 labels sorted reversed normal}
export ONLY=${ONLY:-'^sort-(sort-(uint32|float32|int64)-asc|sort_pairs-(uint32|float32)-asc|argsort-(uint32|float32|int64)-asc)'}
for setting in ${SETTINGS:-0/0 0/1 1/1}; do
  short=${setting%/*} skip=${setting#*/}
  copy="$tmp/build-$short-$skip"
  # What gpuk runs from, laid out as the build is (cmake/layout.cmake: the libraries and plugins
  # under lib/, found from the executable; the kernels at share/gpuk/kernels, found from the
  # library), with a kernel directory of its own instead of the build's link to kernels_src/.
  mkdir -p "$copy/share/gpuk"
  cp -a "$build/gpuk" "$build/lib" "$copy/"
  cp -r "$source_kernels" "$copy/share/gpuk/kernels"
  sed -i "s/^  SHORT: {default: [01]/  SHORT: {default: $short/; s/^  SKIP: {default: [01]/  SKIP: {default: $skip/" \
    "$copy/share/gpuk/kernels/sort/onesweep.cu"
  grep -q "^  SHORT: {default: $short," "$copy/share/gpuk/kernels/sort/onesweep.cu" &&
    grep -q "^  SKIP: {default: $skip," "$copy/share/gpuk/kernels/sort/onesweep.cu" ||
    { echo "onesweep.cu's SHORT/SKIP defaults not found: the metadata changed" >&2; exit 1; }
  echo "== SHORT $short SKIP $skip"
  GPUK="$copy/gpuk" "$here/bench_defaults.sh" "$copy" "$out/runs-$short-$skip" > "$out/$short-$skip.txt" 2>&1
  grep -A200 "^== " "$out/$short-$skip.txt"
  rm -rf "$copy"
done

#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over every search kernel file: find of int32
# (the value at a random position), count of float64 (the value in the middle) and any of int64
# (the value absent), n = 100,003 few_distinct data, two runs each; and find_if with each
# comparison where a file declares it; lower_bound / upper_bound in the files that declare them,
# bounds_window's SPLITS 1 and bounds_merge's tiles.
# Every file of kernels_src/search is taken, so a new one is sanitized without editing this.
# Usage: tools/dev/sanitize_search.sh BUILD_DIR [OUT_DIR]   (TOOLS=synccheck: only that tool)
source "$(dirname "$0")/help.sh" "$@"
source "$(dirname "$0")/sanitize_common.sh" "$@"
for kernel in kernels_src/search/*.cu; do
  grep -qE '^operations:.*\bcount\b' "$kernel" || continue  # the bounds' files: below
  name=$(basename "$kernel" .cu)
  for case in "find int32 random" "count float64 middle" "any int64 absent"; do
    set -- $case
    config="$tmp/$name-$1-$2.yaml"
    printf 'family: search\noperation: %s\nkernel: %s\ndtype: %s\nvalue_at: %s\nsize: 100003\ndata: {generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5}\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
      "$1" "$name" "$2" "$3" > "$config"
    sanitize_run "$config" "$out/sanitize-$name-$1-$2" "$name $1 $2 ($3)"
  done
done
# find_if, in the files that declare it: a comparison of each kind, present (random, middle) and
# absent (the full scan), n odd, data with negatives and ties; a range of each closure.
for kernel in kernels_src/search/*.cu; do
  grep -q '^operations:.*find_if' "$kernel" || continue
  name=$(basename "$kernel" .cu)
  for case in "lt float32 absent" "ge int32 middle" "ne float64 random" "le int64 absent" "gt int32 random" "eq float32 middle"; do
    set -- $case
    config="$tmp/$name-find_if-$1-$2.yaml"
    printf 'family: search\noperation: find_if\ncompare: %s\nkernel: %s\ndtype: %s\nvalue_at: %s\nsize: 100003\ndata: {generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5}\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
      "$1" "$name" "$2" "$3" > "$config"
    sanitize_run "$config" "$out/sanitize-$name-find_if-$1-$2" "$name find_if $1 $2 ($3)"
  done
  # the ranges (a two-value kernel argument): present (lo the middle element) and absent
  for case in "range float64 middle" "closed_range int32 middle" "range uint32 absent" "closed_range float32 absent"; do
    set -- $case
    config="$tmp/$name-find_if-$1-$2.yaml"
    hi=$([ "$3" = absent ] || printf 'value_hi: 900\\n')
    printf 'family: search\noperation: find_if\ncompare: %s\nkernel: %s\ndtype: %s\nvalue_at: %s\n%bsize: 100003\ndata: {generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5}\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
      "$1" "$name" "$2" "$3" "$hi" > "$config"
    sanitize_run "$config" "$out/sanitize-$name-find_if-$1-$2" "$name find_if $1 $2 ($3)"
  done
done
# lower_bound / upper_bound, in the files that declare them: n = 1, odd n with ties (few distinct,
# and one key repeated n times), 1, 37 and 20011 needles (more than a wave of tiles at BLOCK 128),
# sorted and not, the table at its extremes (CACHE 0 and 12) and the window's fallback.
for kernel in kernels_src/search/*.cu; do
  grep -q '^operations:.*lower_bound' "$kernel" || continue
  name=$(basename "$kernel" .cu)
  for case in "lower_bound float32 1 1 unsorted 50" "upper_bound int32 100003 37 sorted 50" \
              "lower_bound float64 100003 20011 unsorted 1" "upper_bound int64 100003 20011 sorted 50" \
              "lower_bound uint32 1000003 5 sorted 1000"; do
    set -- $case
    config="$tmp/$name-$1-$2-$3-$4-$5.yaml"
    printf 'family: search\noperation: %s\nkernel: %s\ndtype: %s\nsize: %s\nneedle_count: %s\nneedles: %s\ndata: {generator: few_distinct, distinct: %s, low: -1000, high: 1000, seed: 5}\nparams: {BLOCK: 128}\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
      "$1" "$name" "$2" "$3" "$4" "$5" "$6" > "$config"
    sanitize_run "$config" "$out/sanitize-$name-$1-$2-$3-$4-$5" "$name $1 $2 n=$3 needles=$4 $5"
  done
done
for name in bounds bounds_gather; do
  for cache in 0 12; do
    config="$tmp/$name-cache$cache.yaml"
    printf 'family: search\noperation: lower_bound\nkernel: %s\nparams: {CACHE: %s}\ndtype: float32\nsize: 33\nneedle_count: 1000\ndata: {generator: uniform, low: -1, high: 1, seed: 5}\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
      "$name" "$cache" > "$config"
    sanitize_run "$config" "$out/sanitize-$name-cache$cache" "$name CACHE=$cache n=33"
  done
done
# bounds_window's SPLITS 1: the first launch's splits in scratch, taken by sorted needles and
# passed over by needles in no order (each tile searches); the default tile and the smallest, a
# tile's worth of needles in 33 keys
for case in "upper_bound int32 100003 20011 sorted 256 4" "lower_bound float64 100003 20011 unsorted 128 1" \
            "lower_bound float32 33 1000 sorted 128 1"; do
  set -- $case
  config="$tmp/bounds_window-splits-$1-$2-$3-$4-$5-$6.yaml"
  printf 'family: search\noperation: %s\nkernel: bounds_window\nparams: {SPLITS: 1, BLOCK: %s, ITEMS: %s}\ndtype: %s\nsize: %s\nneedle_count: %s\nneedles: %s\ndata: {generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5}\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
    "$1" "$6" "$7" "$2" "$3" "$4" "$5" > "$config"
  sanitize_run "$config" "$out/sanitize-bounds_window-splits-$1-$2-$3-$4-$5-$6" "bounds_window SPLITS=1 BLOCK=$6 ITEMS=$7 $1 $2 n=$3 needles=$4 $5"
done
# bounds_merge: the first launch's merge splits, a tile's loads issued a tile ahead, the answers
# checked (unsorted: out-of-order answers searched); the default tile, the smallest with more tiles
# than its grid has blocks, and the widest (dynamic shared memory past 48 KiB) in 33 keys
for case in "upper_bound int32 100003 20011 sorted 256 15" "lower_bound float64 100003 20011 unsorted 128 5" \
            "lower_bound int64 100003 400009 sorted 128 5" "upper_bound float32 33 1000 sorted 512 15"; do
  set -- $case
  config="$tmp/bounds_merge-$1-$2-$3-$4-$5-$6-$7.yaml"
  printf 'family: search\noperation: %s\nkernel: bounds_merge\nparams: {BLOCK: %s, ITEMS: %s, BLOCKS_PER_SM: 1}\ndtype: %s\nsize: %s\nneedle_count: %s\nneedles: %s\ndata: {generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5}\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
    "$1" "$6" "$7" "$2" "$3" "$4" "$5" > "$config"
  sanitize_run "$config" "$out/sanitize-bounds_merge-$1-$2-$3-$4-$5-$6-$7" "bounds_merge BLOCK=$6 ITEMS=$7 $1 $2 n=$3 needles=$4 $5"
done
[ $runs -gt 0 ] || { echo "no search kernel file found under kernels_src/search"; exit 1; }
sanitize_summary

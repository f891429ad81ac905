#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over the top-k kernel file (topk_radix.cu):
# the largest of float32 sorted (60 NaNs among 50 distinct values) and the smallest of int64 in
# input order at odd sizes, batches of odd rows, keys all equal with k = n, and the extreme
# parameters (11-bit digits, one histogram copy, one item a thread, one wave: many parts per row,
# the last-block hand-over at every pass).
# Usage: tools/dev/sanitize_topk.sh BUILD_DIR [OUT_DIR]   (TOOLS=memcheck: only that tool)
source "$(dirname "$0")/help.sh" "$@"
source "$(dirname "$0")/sanitize_common.sh" "$@"
# operation words: dtype order k rows sorted size params data
for case in "float32 descending 100 1 true 20003 {} nan" \
            "int64 ascending 13 7 false 20027 {} spread" \
            "uint32 descending 3001 1 false 3001 {} equal" \
            "float64 descending 4096 1 true 20003 {} spread" \
            "int32 ascending 5 61 true 20008 {} spread" \
            "float32 ascending 77 1 true 50021 {BLOCK:128,ITEMS:1,RADIX_BITS:11,HISTS:1,WAVES:1} spread"; do
  set -- $case
  params=${7//:/: }; params=${params//,/, }
  case $8 in
    equal) data='{generator: few_distinct, distinct: 1, seed: 5}' ;;
    nan) data='{generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5, nan: {count: 60}}' ;;
    *) data='{generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5}' ;;
  esac
  config="$tmp/topk-$1-$2-k$3-rows$4-$5-$6.yaml"
  printf 'family: sort\noperation: topk\nkernel: topk_radix\ndtype: %s\norder: %s\nk: %s\nrows: %s\nsorted: %s\nsize: %s\nparams: %s\ndata: %s\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
    "$1" "$2" "$3" "$4" "$5" "$6" "$params" "$data" > "$config"
  sanitize_run "$config" "$out/sanitize-topk-$1-$2-k$3-rows$4-$5-$6" "topk $1 $2 k=$3 rows=$4 sorted=$5 n=$6 $params"
done
sanitize_summary

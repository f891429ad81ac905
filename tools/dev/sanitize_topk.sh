#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over the top-k kernel files. topk_radix.cu:
# the largest of float32 sorted (60 NaNs among 50 distinct values) and the smallest of int64 in
# input order at odd sizes, batches of odd rows, keys all equal with k = n, and the extreme
# parameters (11-bit digits, one histogram copy, one item a thread, one wave: many parts per row,
# the last-block hand-over at every pass). topk_rows.cu: batches of odd rows held in shared memory
# and rows longer than it holds (read from global memory each pass), NaNs, all-equal keys with
# k = the row's length, k = 4096 sorted, and its corners (one item a thread, 11-bit digits, plain
# atomics, rows of 1024 keys in shared memory; 1024 threads with 16 items and 5-bit digits), and
# the cases that take no digit pass: k = 1 (the block's min-reduction; NaNs sorted, all-equal keys
# in rows longer than the shared memory in input order) and k = the row's length (the copy; NaNs
# sorted, and topk_radix's copy of odd rows sorted); topk_rows's small-k path (k <= 32, the row in
# shared memory: uniform keys with NaNs, sorted) and its fall-back to the digit passes (all-equal
# keys: more candidates than threads). Rows whose length is a multiple of 16 bytes, read as 16-byte
# vectors: 4096 float32 (digit passes with NaNs; small k sorted), 2048 float64 (the copy), 1024
# int32 (k = 1) and 4096 int64 all equal (digit passes to the last bit).
# Usage: tools/dev/sanitize_topk.sh BUILD_DIR [OUT_DIR]   (TOOLS=memcheck: only that tool;
#   KERNELS=topk_rows: only that file's cases)
source "$(dirname "$0")/help.sh" "$@"
source "$(dirname "$0")/sanitize_common.sh" "$@"
# operation words: kernel dtype order k rows sorted size params data
for case in "topk_radix float32 descending 100 1 true 20003 {} nan" \
            "topk_radix int64 ascending 13 7 false 20027 {} spread" \
            "topk_radix uint32 descending 3001 1 false 3001 {} equal" \
            "topk_radix float64 descending 4096 1 true 20003 {} spread" \
            "topk_radix int32 ascending 5 61 true 20008 {} spread" \
            "topk_radix float32 ascending 77 1 true 50021 {BLOCK:128,ITEMS:1,RADIX_BITS:11,HISTS:1,WAVES:1} spread" \
            "topk_rows float32 descending 100 67 true 201067 {} nan" \
            "topk_rows int64 ascending 13 7 false 63007 {} spread" \
            "topk_rows uint32 descending 3001 65 false 195065 {} equal" \
            "topk_rows float64 descending 4096 64 true 262336 {} spread" \
            "topk_rows float32 ascending 77 65 true 97500 {BLOCK:128,ITEMS:1,RADIX_BITS:11,ROW_KEYS:1024,WAVES:1,MATCH:0} spread" \
            "topk_rows int32 ascending 5 100 false 200300 {BLOCK:1024,ITEMS:16,RADIX_BITS:5} spread" \
            "topk_rows float32 descending 1 67 true 201067 {} nan" \
            "topk_rows int64 ascending 1 7 false 63007 {} equal" \
            "topk_rows float32 descending 3001 65 true 195065 {} nan" \
            "topk_radix float32 descending 3001 5 true 15005 {} nan" \
            "topk_rows float32 descending 16 67 true 201067 {} nanuniform" \
            "topk_rows int64 ascending 8 9 false 63009 {} equal" \
            "topk_rows float32 descending 256 64 false 262144 {} nan" \
            "topk_rows float64 ascending 2048 33 false 67584 {} spread" \
            "topk_rows int32 descending 1 64 false 65536 {} spread" \
            "topk_rows float32 descending 8 64 true 262144 {} nanuniform" \
            "topk_rows int64 descending 300 32 false 131072 {} equal"; do
  set -- $case
  kernel=$1
  shift
  [ -n "${KERNELS:-}" ] && [[ ",$KERNELS," != *",$kernel,"* ]] && continue
  params=${7//:/: }; params=${params//,/, }
  case $8 in
    equal) data='{generator: few_distinct, distinct: 1, seed: 5}' ;;
    nan) data='{generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5, nan: {count: 60}}' ;;
    nanuniform) data='{generator: uniform, low: -1, high: 1, seed: 5, nan: {count: 60}}' ;;
    *) data='{generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5}' ;;
  esac
  config="$tmp/$kernel-$1-$2-k$3-rows$4-$5-$6.yaml"
  printf 'family: sort\noperation: topk\nkernel: %s\ndtype: %s\norder: %s\nk: %s\nrows: %s\nsorted: %s\nsize: %s\nparams: %s\ndata: %s\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
    "$kernel" "$1" "$2" "$3" "$4" "$5" "$6" "$params" "$data" > "$config"
  sanitize_run "$config" "$out/sanitize-$kernel-$1-$2-k$3-rows$4-$5-$6" "$kernel $1 $2 k=$3 rows=$4 sorted=$5 n=$6 $params"
done
sanitize_summary

#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over the segmented sort (segmented.cu): keys
# and pairs in power-law segments (empty ones, one-warp ones, one-block ones and ones merged
# across the GPU), float32 with NaNs, int64 all equal, the smallest tile (BLOCK 128, ITEMS 4: 512
# keys, so most segments merge), and a few long equal segments (merged at the default tile too);
# then long segments by digit passes (LONG 1) at 7-bit (BLOCK 128) and 8-bit digits; then WARP 0
# (short segments by the warps of the tickets' launch), merged and by digit passes.
# Usage: tools/dev/sanitize_segmented.sh BUILD_DIR [OUT_DIR]   (TOOLS=memcheck: only that tool)
source "$(dirname "$0")/help.sh" "$@"
source "$(dirname "$0")/sanitize_common.sh" "$@"
# operation dtype order segments lengths size params data
for case in "segmented_sort float32 ascending 300 power_law 20003 {} nan" \
            "segmented_sort_pairs int64 descending 7 equal 20027 {} equal" \
            "segmented_sort_pairs float64 ascending 1000 power_law 30011 {} spread" \
            "segmented_sort uint32 descending 40 power_law 20011 {WARPS:4,BLOCK:128,ITEMS:4} spread" \
            "segmented_sort_pairs float32 ascending 3 equal 30011 {} nan" \
            "segmented_sort float64 descending 2 equal 40009 {BLOCK:128,ITEMS:8} equal" \
            "segmented_sort_pairs float32 descending 2 equal 50021 {BLOCK:512,ITEMS:16} nan" \
            "segmented_sort_pairs float32 ascending 3 equal 30011 {LONG:1} nan" \
            "segmented_sort int64 descending 40 power_law 40013 {BLOCK:256,ITEMS:4,LONG:1} spread" \
            "segmented_sort_pairs float64 ascending 2 equal 40009 {LONG:1} equal" \
            "segmented_sort float32 ascending 300 power_law 20005 {WARP:0} nan" \
            "segmented_sort_pairs uint32 descending 40 power_law 20013 {WARP:0,BLOCK:128,ITEMS:4,LONG:1} spread"; do
  set -- $case
  params=${7//:/: }; params=${params//,/, }
  case $8 in
    equal) data='{generator: few_distinct, distinct: 1, seed: 5}' ;;
    nan) data='{generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5, nan: {count: 60}}' ;;
    *) data='{generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5}' ;;
  esac
  config="$tmp/seg-$1-$2-$3-$4-$5-$6.yaml"
  printf 'family: sort\noperation: %s\nkernel: segmented\ndtype: %s\norder: %s\nsegments: %s\nsegment_lengths: %s\nsize: %s\nparams: %s\ndata: %s\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
    "$1" "$2" "$3" "$4" "$5" "$6" "$params" "$data" > "$config"
  sanitize_run "$config" "$out/sanitize-seg-$1-$2-$3-$4-$5-$6" "$1 $2 $3 segments=$4 $5 n=$6 $params"
done
sanitize_summary

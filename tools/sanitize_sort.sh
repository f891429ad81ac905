#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over every sort kernel file: sort_pairs of
# float32 keys with uint64 values (descending) and argsort of int64, at odd sizes (radix: 20,003,
# three whole tiles of its default 512 x 12 and a partial one, through its digit passes; the one-block kernels and radix's
# one-block path: 3,001).
# Usage: tools/sanitize_sort.sh BUILD_DIR [OUT_DIR]   (KERNELS=radix,rank_bucket: only those files; TOOLS=memcheck: only that tool)
source "$(dirname "$0")/sanitize_common.sh" "$@"
size_for() {  # a moderate size each file accepts
  case $1 in
    rank_*) echo 3001 ;; radix_block) echo 3001 ;; *) echo 20003 ;;  # rank_*: n^2, slow under racecheck
  esac
}
for kernel in kernels_src/sort/*.cu; do
  name=$(basename "$kernel" .cu)
  [ -n "${KERNELS:-}" ] && [[ ",$KERNELS," != *",$name,"* ]] && continue
  for case in "sort_pairs float32 descending uint64 passes" "argsort int64 ascending uint32 passes" \
              "sort uint32 ascending uint32 small"; do
    set -- $case
    [ "$name" != radix ] && [ "$5" = small ] && continue
    size=$(size_for "$name")
    [ "$5" = small ] && size=3001  # radix's one-block path (SMALL = 1, n <= BLOCK * ITEMS)
    config="$tmp/$name-$1-$2-$size.yaml"
    params="{}"
    printf 'family: sort\noperation: %s\nkernel: %s\ndtype: %s\norder: %s\nvalues: %s\nparams: %s\nsize: %s\ndata: {generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5}\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
      "$1" "$name" "$2" "$3" "$4" "$params" "$size" > "$config"
    sanitize_run "$config" "$out/sanitize-$name-$1-$2-$size" "$name $1 $2 n=$size"
  done
done
exit $status

#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over every sort kernel file: sort_pairs of
# float32 keys with uint64 values (descending) and argsort of int64, at odd sizes (radix: 20,003,
# two whole tiles of its default 384 x 20 and a partial one, through its digit passes, and again
# with its other value load and look-back width; the one-block kernels and radix's one-block
# path: 3,001, for sort of uint32 and argsort of int64); onesweep also sorts 32- and 64-bit keys,
# float32 pairs in one exchange round, uint32 pairs with the values loaded late, and argsort of
# int32 at a 256 x 12 tile, with each of its three warp matches; and int32 pairs and float32
# argsort with the values copied to shared memory at their rank (VLOAD 2), and int64 keys copied
# there the same way (KLOAD 1); and onesweep's shortcuts (SHORT 1 and 2, SKIP 1) on the inputs that
# take them: sorted keys of two values (tiles of one digit, three passes of one digit) for keys,
# pairs and argsort (SHORT 2 for 8-byte argsort: its in-order ranks), keys all equal (no pass run
# but the copy) for argsort, and float32 pairs of 50 values with SKIP 1 (no pass left out: the
# unrouted pass); and the shortcuts with BATCH 1 as the H200's shipped entries take them (keys
# flipped to be held, float32 pairs, int64 argsort). A case's seventh word picks
# such data (default: 50 distinct keys in [-1000, 1000]).
# Usage: tools/dev/sanitize_sort.sh BUILD_DIR [OUT_DIR]   (KERNELS=radix,rank_bucket: only those files;
# TOOLS=memcheck: only that tool; CASES=argsort-int64: only the cases of that operation and dtype;
# MATCH=REGEX: only the cases whose line below matches, e.g. MATCH='SHORT:2')
source "$(dirname "$0")/help.sh" "$@"
source "$(dirname "$0")/sanitize_common.sh" "$@"
size_for() {  # a moderate size each file accepts
  case $1 in
    rank_*) echo 3001 ;; radix_block) echo 3001 ;; *) echo 20003 ;;  # rank_*: n^2, slow under racecheck
  esac
}
for kernel in kernels_src/sort/*.cu; do
  name=$(basename "$kernel" .cu)
  [[ $name = topk_* ]] && continue  # top-k, not a sort: tools/dev/sanitize_topk.sh
  [ "$name" = segmented ] && continue  # segments: tools/dev/sanitize_segmented.sh
  [ -n "${KERNELS:-}" ] && [[ ",$KERNELS," != *",$name,"* ]] && continue
  for case in "sort_pairs float32 descending uint64 passes {}" "argsort int64 ascending uint32 passes {}" \
              "sort uint32 ascending uint32 small {}" "argsort int64 ascending uint32 small {}" \
              "sort_pairs float32 descending uint64 passes {VLOAD:0,LB32:1,BLOCK:256,ITEMS:23}" \
              "sort uint32 descending uint32 passes-onesweep {}" "sort float64 ascending uint32 passes-onesweep {}" \
              "sort_pairs float32 ascending uint32 passes-onesweep {}" \
              "sort_pairs uint32 ascending uint32 passes-onesweep {VLOAD:1,LB32:1,MATCH:1}" \
              "argsort int32 descending uint32 passes-onesweep {BLOCK:256,ITEMS:12,MATCH:2}" \
              "sort_pairs int32 descending uint32 passes-onesweep {VLOAD:2,MIN_BLOCKS:3,LB32:1}" \
              "argsort float32 ascending uint32 passes-onesweep {VLOAD:2,MIN_BLOCKS:3}" \
              "sort int64 descending uint32 passes-onesweep {KLOAD:1,MIN_BLOCKS:3,ITEMS:20}" \
              "sort uint32 ascending uint32 passes-onesweep {SHORT:1,SKIP:1} two-sorted" \
              "sort_pairs uint32 descending uint32 passes-onesweep {SHORT:1,SKIP:1,VLOAD:1} two-sorted" \
              "argsort int64 ascending uint32 passes-onesweep {SHORT:1,SKIP:1} equal" \
              "sort uint32 ascending uint32 passes-onesweep {SHORT:2,SKIP:1} two-sorted" \
              "sort_pairs uint32 descending uint32 passes-onesweep {SHORT:2,SKIP:1,VLOAD:1} two-sorted" \
              "sort_pairs float32 ascending uint32 passes-onesweep {SHORT:2,SKIP:1}" \
              "argsort int64 ascending uint32 passes-onesweep {SHORT:2,SKIP:0,VLOAD:1} two-sorted" \
              "argsort float32 descending uint32 passes-onesweep {SHORT:2,SKIP:1,VLOAD:2} two-sorted" \
              "sort uint32 descending uint32 passes-onesweep {BATCH:1,SHORT:1,SKIP:1,MIN_BLOCKS:3,LB32:1} two-sorted" \
              "sort_pairs uint32 descending uint32 passes-onesweep {BATCH:1,SHORT:2,SKIP:1,LB32:1} two-sorted" \
              "sort_pairs float32 ascending uint32 passes-onesweep {BATCH:1,SHORT:2,LB32:1}" \
              "sort int32 ascending uint32 passes-onesweep {BATCH:1,SHORT:2,SKIP:1,MIN_BLOCKS:3}" \
              "argsort int64 descending uint32 passes-onesweep {BATCH:1,SHORT:2,VLOAD:1,LB32:1} two-sorted"; do
    set -- $case
    [ -n "${CASES:-}" ] && [[ ",$CASES," != *",$1-$2,"* ]] && continue
    [ -n "${MATCH:-}" ] && [[ ! "$case" =~ $MATCH ]] && continue
    # radix: every case but onesweep's; onesweep: the passes cases; the others: the first two.
    if [ "$name" = onesweep ]; then [[ "$5" == passes* ]] || continue
    elif [ "$5" = passes-onesweep ]; then continue
    elif [ "$name" != radix ] && { [ "$5" = small ] || [ "$6" != "{}" ]; }; then continue; fi
    size=$(size_for "$name")
    [ "$5" = small ] && size=3001  # radix's one-block path (SMALL = 1, n <= BLOCK * ITEMS)
    params=${6//:/: }; params=${params//,/, }  # the case's words have no spaces; YAML needs them
    tag=$( [ "$params" = "{}" ] && echo "" || echo "-$(echo "$6" | tr -d '{}' | tr ':,' '--' | tr 'A-Z' 'a-z')" )
    case ${7:-} in
      two-sorted) data='{generator: sorted, low: 0, high: 1, seed: 5}'; tag="$tag-two-sorted" ;;
      equal) data='{generator: few_distinct, distinct: 1, seed: 5}'; tag="$tag-equal" ;;
      *) data='{generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5}' ;;
    esac
    config="$tmp/$name-$1-$2-$3-$size$tag.yaml"
    printf 'family: sort\noperation: %s\nkernel: %s\ndtype: %s\norder: %s\nvalues: %s\nparams: %s\nsize: %s\ndata: %s\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
      "$1" "$name" "$2" "$3" "$4" "$params" "$size" "$data" > "$config"
    sanitize_run "$config" "$out/sanitize-$name-$1-$2-$3-$size$tag" "$name $1 $2 $3 n=$size $params"
  done
done
sanitize_summary

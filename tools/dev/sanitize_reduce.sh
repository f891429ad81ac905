#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over every reduce kernel file (argmax of
# float32 |x| and sum of int64, odd size), and argminmax on its edge shapes (onepass, one_block).
# Usage: tools/dev/sanitize_reduce.sh BUILD_DIR [OUT_DIR]
# (TOOLS=synccheck: only that tool; KERNELS="onepass ...": only those files; PARAMS='{LOAD: 1}':
# the params of every run; CASES="max,float32,false ...": operation,dtype,abs of each run;
# EDGES=0: without argminmax's edge shapes)
source "$(dirname "$0")/help.sh" "$@"
source "$(dirname "$0")/sanitize_common.sh" "$@"
for name in ${KERNELS:-$(basename -s .cu kernels_src/reduce/*.cu)}; do
  for case in ${CASES:-argmax,float32,true sum,int64,false}; do
    IFS=, read -r op dtype abs <<< "$case"
    config="$tmp/$name-$op-$dtype.yaml"
    printf 'family: reduce\noperation: %s\nkernel: %s\n%bdtype: %s\nabs: %s\nsize: 100003\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
      "$op" "$name" "${PARAMS:+params: $PARAMS\n}" "$dtype" "$abs" > "$config"
    sanitize_run "$config" "$out/sanitize-$name-$op-$dtype" "$name $op $dtype${PARAMS:+ $PARAMS}"
  done
done
# argminmax's edge shapes with onepass (its kernel) and one_block (the launch-bound sizes'): one
# element, a block's partial tile, a grid of blocks with a partial tile; onepass's packed path
# (float32 with NaNs, int32 |x|) and its partials path (float64). EDGES=0 leaves them out; KERNELS
# narrows them too.
if [ "${EDGES:-1}" = 1 ]; then
  for kernel in onepass one_block; do
    [[ " ${KERNELS:-onepass one_block} " == *" $kernel "* ]] || continue
    for case in float32,false,1 float32,false,100003 int32,true,5000 float64,false,100003; do
      IFS=, read -r dtype abs size <<< "$case"
      config="$tmp/$kernel-argminmax-$dtype-$size.yaml"
      printf 'family: reduce\noperation: argminmax\nkernel: %s\n%bdtype: %s\nabs: %s\nsize: %s\ndata: {generator: uniform, low: -1, high: 1%s, seed: 1}\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
        "$kernel" "${PARAMS:+params: $PARAMS\n}" "$dtype" "$abs" "$size" \
        "$([ "$dtype" = float32 ] && [ "$size" -gt 3 ] && echo ", nan: {count: 3, at: [$((size / 2))]}")" > "$config"
      sanitize_run "$config" "$out/sanitize-$kernel-argminmax-$dtype-$size" "$kernel argminmax $dtype abs=$abs n=$size${PARAMS:+ $PARAMS}"
    done
  done
fi
sanitize_summary

#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over every reduce kernel file (argmax of
# float32 |x| and sum of int64, odd size), and argminmax on its edge shapes (onepass, one_block,
# onepass's FOLD 2).
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
# (float32 with NaNs, int32 |x|), its partials path (float64) and its FOLD 2 (float32 compared as
# floats, as "onepass-fold2": with and without NaNs, |x| too, in the shape measured at 2^28 and in
# the smallest tile with SPLIT 1). EDGES=0 leaves them out; KERNELS narrows them too.
if [ "${EDGES:-1}" = 1 ]; then
  fold2_shapes=("{BLOCK: 256, UNROLL: 8, BLOCKS_PER_SM: 4, LOAD: 2, WAVES: 4, FOLD: 2}"
                "{BLOCK: 128, UNROLL: 1, BLOCKS_PER_SM: 2, SPLIT: 1, FOLD: 2}")
  for kernel in onepass one_block onepass-fold2; do
    [[ " ${KERNELS:-onepass one_block} " == *" ${kernel%-fold2} "* ]] || continue
    cases="float32,false,1 float32,false,100003 int32,true,5000 float64,false,100003"
    shapes=("${PARAMS:-}")
    if [ "$kernel" = onepass-fold2 ]; then
      cases="float32,false,1 float32,false,100003 float32,true,5000 float32,false,1000003,nonan"
      shapes=("${fold2_shapes[@]}")
    fi
    for k in "${!shapes[@]}"; do
      params=${shapes[$k]}
      for case in $cases; do
        IFS=, read -r dtype abs size nonan <<< "$case"
        name="$kernel${params:+-$k}-argminmax-$dtype-$size"
        config="$tmp/$name.yaml"
        printf 'family: reduce\noperation: argminmax\nkernel: %s\n%bdtype: %s\nabs: %s\nsize: %s\ndata: {generator: uniform, low: -1, high: 1%s, seed: 1}\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
          "${kernel%-fold2}" "${params:+params: $params\n}" "$dtype" "$abs" "$size" \
          "$([ "$dtype" = float32 ] && [ "$size" -gt 3 ] && [ -z "$nonan" ] && echo ", nan: {count: 3, at: [$((size / 2))]}")" > "$config"
        sanitize_run "$config" "$out/sanitize-$name" "${kernel%-fold2} argminmax $dtype abs=$abs n=$size${params:+ $params}"
      done
    done
  done
fi
sanitize_summary

#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over every reduce kernel file (argmax of
# float32 |x| and sum of int64, odd size). Usage: tools/dev/sanitize_reduce.sh BUILD_DIR [OUT_DIR]
# (TOOLS=synccheck: only that tool; KERNELS="onepass ...": only those files; PARAMS='{LOAD: 1}':
# the params of every run; CASES="max,float32,false ...": operation,dtype,abs of each run)
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
sanitize_summary

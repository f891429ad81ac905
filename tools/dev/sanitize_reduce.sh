#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over every reduce kernel file (argmax of
# float32 |x| and sum of int64, odd size). Usage: tools/dev/sanitize_reduce.sh BUILD_DIR [OUT_DIR]
# (TOOLS=synccheck: only that tool)
source "$(dirname "$0")/sanitize_common.sh" "$@"
for kernel in kernels_src/reduce/*.cu; do
  name=$(basename "$kernel" .cu)
  for case in "argmax float32 true" "sum int64 false"; do
    set -- $case
    config="$tmp/$name-$1-$2.yaml"
    printf 'family: reduce\noperation: %s\nkernel: %s\ndtype: %s\nabs: %s\nsize: 100003\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
      "$1" "$name" "$2" "$3" > "$config"
    sanitize_run "$config" "$out/sanitize-$name-$1" "$name $1 $2"
  done
done
sanitize_summary

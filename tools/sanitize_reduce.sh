#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck over every reduce kernel file (argmax of
# float32 |x| and sum of int64, odd size). Usage: tools/sanitize_reduce.sh BUILD_DIR [OUT_DIR]
set -uo pipefail
build=${1:-build}
out=${2:-.}
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
tmp=$(mktemp -d)
status=0
for kernel in kernels_src/reduce/*.cu; do
  name=$(basename "$kernel" .cu)
  for case in "argmax float32 true" "sum int64 false"; do
    set -- $case
    config="$tmp/$name-$1-$2.yaml"
    printf 'family: reduce\noperation: %s\nkernel: %s\ndtype: %s\nabs: %s\nsize: 100003\nwarmup: 0\nrepeats: 2\ncpu_repeats: 1\nbaseline: false\n' \
      "$1" "$name" "$2" "$3" > "$config"
    for tool in memcheck racecheck synccheck; do
      log="$out/sanitize-$name-$1-$tool.log"
      if "$sanitizer" --tool "$tool" --error-exitcode 9 "$build/gpuk" run "$config" > "$log" 2>&1 &&
         grep -q "verify      PASS" "$log"; then
        echo "clean   $tool  $name $1 $2"
      else
        echo "FAILED  $tool  $name $1 $2 (see $log)"
        status=1
      fi
    done
  done
done
rm -rf "$tmp"
exit $status

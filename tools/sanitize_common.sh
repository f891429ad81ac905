# Sourced by tools/sanitize_*.sh, whose arguments are BUILD_DIR [OUT_DIR]: sets $build, $out
# (created), $tmp (a temporary directory, removed on exit) and $status (0), and defines
#   sanitize_run CONFIG LOG_PREFIX LABEL
# runs `gpuk run CONFIG` under each tool in $TOOLS (default memcheck racecheck synccheck), writes
# LOG_PREFIX-TOOL.log, prints "clean" or "FAILED" per tool, and sets status=1 on a failure: a
# sanitizer error, a non-zero exit or a result that did not verify.
set -uo pipefail
build=${1:-build}
out=${2:-.}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
sanitize_run() {
  local config=$1 prefix=$2 label=$3 tool log
  for tool in ${TOOLS:-memcheck racecheck synccheck}; do
    log="$prefix-$tool.log"
    if "$sanitizer" --tool "$tool" --error-exitcode 9 "$build/gpuk" run "$config" > "$log" 2>&1 &&
       grep -q "verify      PASS" "$log"; then
      echo "clean   $tool  $label"
    else
      echo "FAILED  $tool  $label (see $log)"
      status=1
    fi
  done
}

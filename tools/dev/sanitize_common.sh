# Sourced by tools/sanitize_*.sh, whose arguments are BUILD_DIR [OUT_DIR]: sets $build, $out
# (created), $tmp (a temporary directory, removed on exit) and $status (0), and defines
#   sanitize_run CONFIG LOG_PREFIX LABEL
# runs `gpuk run CONFIG` under each tool in $TOOLS (default memcheck racecheck synccheck), writes
# LOG_PREFIX-TOOL.log, prints "clean" or "FAILED" per tool, and sets status=1 on a failure: a
# sanitizer error, a non-zero exit or a result that did not verify; and
#   sanitize_summary
# prints how many runs there were and how many failed (the line the docs quote), and exits with
# $status.
set -uo pipefail
build=${1:-build}
out=${2:-.}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
runs=0 failed=0
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
sanitize_run() {
  local config=$1 prefix=$2 label=$3 tool log
  for tool in ${TOOLS:-memcheck racecheck synccheck}; do
    log="$prefix-$tool.log"
    runs=$((runs + 1))
    if "$sanitizer" --tool "$tool" --error-exitcode 9 "$build/gpuk" run "$config" > "$log" 2>&1 &&
       grep -q "verify      PASS" "$log"; then
      echo "clean   $tool  $label"
    else
      echo "FAILED  $tool  $label (see $log)"
      status=1 failed=$((failed + 1))
    fi
  done
}
sanitize_summary() {
  local tools=${TOOLS:-memcheck racecheck synccheck}
  if [ $failed = 0 ]; then
    echo "$runs runs under ${tools// /, } ($("$sanitizer" --version | grep -o 'Version [^ ]*' | head -1)): all clean and verified"
  else
    echo "$runs runs under ${tools// /, }: $failed FAILED"
  fi
  exit $status
}

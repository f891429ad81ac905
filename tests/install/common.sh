# Shared by the install and relocation tests: arguments, a scratch directory, and the checks.
# Usage of a test: TEST.sh SOURCE_DIR BUILD_DIR [CMAKE_ARGS...]
set -euo pipefail
source_dir=$(realpath "$1")
build_dir=$(realpath "$2")
shift 2
scratch=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/gpuk-install-test.XXXXXX")")
trap 'rm -rf "$scratch"' EXIT

fail() {
  echo "FAILED: $*" >&2
  exit 1
}

# `gpuk list` (GPUK: an absolute path) from a directory that is neither the source nor the build tree; its output in
# $scratch/list.txt. Checks that it found plugins and kernel files, with no problems, and that
# every path it names lies under $1: the files gpuk found are those of the tree it was run from.
list_from_elsewhere() {
  local gpuk=$1 root=$2
  mkdir -p "$scratch/elsewhere"
  local status=0
  (cd "$scratch/elsewhere" && "$gpuk" list) >"$scratch/list.txt" 2>&1 || status=$?
  if [ "$status" != 0 ]; then
    cat "$scratch/list.txt" >&2
    fail "$gpuk list exited with $status"
  fi
  grep -q "libgpuk_family_reduce.so" "$scratch/list.txt" || fail "$gpuk list shows no reduce plugin"
  grep -q "reduce/onepass.cu" "$scratch/list.txt" || fail "$gpuk list shows no reduce/onepass.cu"
  if grep -q "^Problems" "$scratch/list.txt"; then
    cat "$scratch/list.txt" >&2
    fail "$gpuk list reports problems"
  fi
  local path outside=0
  while read -r path; do
    path=${path//[[:space:]]/}
    case "$path" in
      "$root"/*) ;;
      *) echo "  outside $root: $path" >&2; outside=1 ;;
    esac
  done < <(grep -oE '(^|[[:space:]])/[^[:space:]]+\.(so|cu)([[:space:]]|$)' "$scratch/list.txt")
  [ "$outside" = 0 ] || fail "$gpuk list names files outside $root"
}

# `gpuk check FILE --arch sm_90` (NVRTC only, no GPU) from elsewhere.
check_from_elsewhere() {
  local gpuk=$1 file=$2
  mkdir -p "$scratch/elsewhere"
  local status=0
  (cd "$scratch/elsewhere" && "$gpuk" check "$file" --arch sm_90) >"$scratch/check.txt" 2>&1 || status=$?
  if [ "$status" != 0 ]; then
    cat "$scratch/check.txt" >&2
    fail "$gpuk check $file exited with $status"
  fi
  grep -q "^all passed" "$scratch/check.txt" || fail "$gpuk check $file did not pass"
}

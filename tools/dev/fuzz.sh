#!/usr/bin/env bash
# The sanitizer stage of the tests (tools/test.sh runs it after the main build):
#   1. builds with the `sanitize` preset (clang, AddressSanitizer + UndefinedBehaviorSanitizer,
#      libFuzzer targets) and runs the CPU tests under the sanitizers;
#   2. runs each fuzzer of tests/fuzz for a bounded time over its seed corpus, one per core side
#      by side, with limits that turn a giant allocation, a leak, a hang or a crash into a failure.
# Usage: tools/dev/fuzz.sh [SECONDS_PER_FUZZER]   (default $GPUK_FUZZ_SECONDS or 12; $GPUK_FUZZ_JOBS
#        fuzzers at a time, default one per core: six fuzzers in 36 s on 2 cores)
source "$(dirname "$0")/help.sh" "$@"
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-${GPUK_FUZZ_SECONDS:-12}}
cmake --preset sanitize > /dev/null
cmake --build --preset sanitize --target gpuk_cpu_tests gpuk_declared_tests fuzz_config fuzz_kernel_file fuzz_declaration fuzz_metric fuzz_npy \
  fuzz_cell_file
status=0
ctest --preset sanitize -j "$(nproc)" || status=$?  # the CPU tests run as two halves side by side

artifacts=build-sanitize/fuzz-artifacts
mkdir -p "$artifacts"
fuzzers=(config kernel_file declaration metric npy cell_file)
# One fuzzer: its log in $artifacts/NAME.log, its exit status in $artifacts/NAME.status.
fuzz_one() {
  local name=$1 work fuzz_status=0
  work=$(mktemp -d)
  # Limits: -malloc_limit_mb catches a header or config that makes the code allocate more
  # than the input could justify; -timeout catches a hang; leaks fail too.
  ./build-sanitize/tests/fuzz/fuzz_$name "$work" "tests/fuzz/corpus/$name" \
    -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 \
    -artifact_prefix="$artifacts/$name-" -print_final_stats=1 > "$artifacts/$name.log" 2>&1 || fuzz_status=$?
  echo "$fuzz_status" > "$artifacts/$name.status"
  rm -rf "$work"
}
# Side by side, one per core (each fuzzer runs on one), each for $seconds; then the verdicts in order.
parallel=${GPUK_FUZZ_JOBS:-$(nproc)}
[[ $parallel =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: GPUK_FUZZ_JOBS must be a positive integer, not '$parallel'" >&2; exit 2; }
echo "fuzzing ${fuzzers[*]} for ${seconds}s each, $parallel at a time (seeds: tests/fuzz/corpus/NAME)"
for name in "${fuzzers[@]}"; do
  rm -f "$artifacts/$name.status"
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  fuzz_one "$name" &
done
wait
for name in "${fuzzers[@]}"; do
  if [ "$(cat "$artifacts/$name.status" 2>/dev/null)" = 0 ]; then
    echo "fuzz $name: clean ($(grep -m1 'stat::number_of_executed_units' "$artifacts/$name.log" | awk '{print $2}') runs)"
  else
    echo "fuzz $name: FAILED; the input is in $artifacts/, the log in $artifacts/$name.log"
    tail -40 "$artifacts/$name.log"
    status=1
  fi
done
exit $status

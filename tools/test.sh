#!/usr/bin/env bash
# The test command: build, then run the CPU, JIT, GPU and install tests (cmake --install, a moved
# build tree, find_package(gpuk)) and the Python package's pytest suite (label python). Without
# a GPU the GPU tests are skipped, and the reasons are printed below CTest's summary. Then the
# sanitizer stage (tools/dev/fuzz.sh): the CPU tests under ASan + UBSan, and a bounded run of each
# fuzzer.
# Usage: tools/test.sh   (from anywhere; no arguments; what .ci/run runs)
source "$(dirname "$0")/dev/help.sh" "$@"
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default
cmake --build --preset default
status=0
ctest --preset default -j "$(nproc)" || status=$?  # the GPU tests take turns (RESOURCE_LOCK gpu)
if [ -f build/Testing/Temporary/LastTest.log ]; then
  # One line per reason: pytest's "SKIPPED [N] file:line: reason" lines counted together.
  grep -h "^SKIPPED" build/Testing/Temporary/LastTest.log | awk '
    { n = 1; line = $0
      if (match(line, /^SKIPPED \[[0-9]+\] [^ ]+:[0-9]+: /)) {
        n = substr(line, 10, index(line, "]") - 10) + 0; line = "SKIPPED: " substr(line, RLENGTH + 1) }
      count[line] += n }
    END { for (l in count) print l (count[l] > 1 ? " (" count[l] " tests)" : "") }' | sort || true
fi
if [ "${GPUK_SKIP_SANITIZE:-0}" != 1 ]; then
  tools/dev/fuzz.sh || status=$?
fi
exit $status

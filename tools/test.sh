#!/usr/bin/env bash
# The test command: build, then run the CPU, JIT and GPU tests. Without a GPU the GPU tests are
# skipped, and the reason is printed below CTest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default
cmake --build --preset default
status=0
ctest --preset default || status=$?
if [ -f build/Testing/Temporary/LastTest.log ]; then
  grep -h "^SKIPPED:" build/Testing/Temporary/LastTest.log | sort -u || true
fi
exit $status

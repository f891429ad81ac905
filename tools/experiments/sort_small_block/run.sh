#!/usr/bin/env bash
# Where a one-block bucketed rank sort of 4,096 uint32 keys spends its time (the first
# first rank_bucket draft: one block of 1024 threads, 4 keys each, 2^12 buckets). A standalone
# CUDA program, not gpuk: each launch timed with CUDA events behind a stream gate (as gpuk's
# time_device), outputs poisoned before each run, with and without an L2 flush; the kernel
# stopped after each phase (stops 1-4 write placeholders), and clock64 stamps of thread 0 after
# each phase of the full kernel, which is verified against std::sort. docs/PERFORMANCE.md and
# kernels_src/sort/rank_bucket.cu cite the result.
# Usage: tools/experiments/sort_small_block/run.sh   (on a GPU; nvcc on PATH)
source "$(dirname "$0")/../../dev/help.sh" "$@"
set -eu
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nvcc -O3 -std=c++17 -arch=sm_90 -o "$tmp/harness" "$here/harness.cu"
timeout 60 "$tmp/harness" "${1:-4096}"

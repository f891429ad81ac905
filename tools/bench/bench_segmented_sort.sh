#!/usr/bin/env bash
# gpuk's segmented sort against cub::DeviceSegmentedSort (StableSortKeys, StableSortPairs) of the
# toolkit's CCCL, in one process on the same device keys and offsets, every answer verified
# (bench_segmented_sort.cu): float32 keys (uint32 values), 2^20 keys in segments of 16, 256 and
# 4096 and in 4096 power-law segments, and 2^26 keys in 64 segments. Prints the CCCL version and
# one markdown row per case; the table is also left in OUT_DIR/bench_segmented_sort.md.
# Usage: tools/bench/bench_segmented_sort.sh BUILD_DIR [OUT_DIR]   (CASES="16 power": fewer;
#   ARCH=sm_90: the architecture when no GPU answers nvidia-smi)
source "$(dirname "$0")/../dev/help.sh" "$@"
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
out=${2:-bench-segmented-sort}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
arch=${ARCH:-sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.' || echo 90)}
[ "$arch" = sm_ ] && arch=sm_90
exe="$build/bench_segmented_sort"
if [ ! -x "$exe" ] || [ tools/bench/bench_segmented_sort.cu -nt "$exe" ]; then
  echo "building $exe for $arch (the toolkit's CCCL)" >&2
  nvcc -std=c++17 -O2 -arch="$arch" -Icore/include tools/bench/bench_segmented_sort.cu -o "$exe" \
    -L"$build/lib" -lgpuk_core -Xlinker -rpath -Xlinker "$build/lib"
fi
"$exe" ${CASES:-16 256 4096 power 64} | tee "$out/bench_segmented_sort.md"

#!/usr/bin/env bash
# gpuk's top-k against CUB's DeviceTopK and DeviceBatchedTopK built against the newest CCCL's
# headers (tools/bench/cccl_headers.sh: PyPI's nvidia-cuda-cccl, CCCL 3.5.0; the toolkit's CCCL
# lacks them), in one process on the same device keys, every answer verified (bench_topk.cu):
# float32 and int32, the k largest, k in {1, 8, 32, 256, 1024, 4096}, one array of 2^16, 2^18,
# ..., 2^28 keys, and batches of 1024 rows of 2^12..2^16 keys and 16 rows of 2^20. gpuk takes its
# default path (a prepared handle, unsorted output as CUB's). Prints the CCCL version and one
# markdown row per case as it finishes; the table is also left in OUT_DIR/bench_topk.md.
# The baseline is built here only (nvcc, the GPU's architecture), so the project builds without
# those headers. The headers must be there before the GPU machine runs it (carry: [.cccl]).
# Usage: tools/bench/bench_topk.sh BUILD_DIR [OUT_DIR]   (SIZES="16 20", KS="1 32", BATCHES=0,
#   ROW_SIZES="12" (the batches' row lengths, log2), DTYPES="float32": fewer cases; ARCH=sm_90:
#   the architecture when no GPU answers nvidia-smi)
source "$(dirname "$0")/../dev/help.sh" "$@"
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
out=${2:-bench-topk}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
include=$(tools/bench/cccl_headers.sh)
arch=${ARCH:-sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.' || echo 90)}
[ "$arch" = sm_ ] && arch=sm_90
exe="$build/bench_topk"
if [ ! -x "$exe" ] || [ tools/bench/bench_topk.cu -nt "$exe" ]; then
  echo "building $exe against $include for $arch" >&2
  nvcc -std=c++17 -O2 -arch="$arch" --extended-lambda -I"$include" -Icore/include -Iplugins/sort/include \
    tools/bench/bench_topk.cu -o "$exe" -L"$build/lib" -lgpuk_core -Xlinker -rpath -Xlinker "$build/lib"
fi
"$exe" ${DTYPES:-float32 int32} | tee "$out/bench_topk.md"

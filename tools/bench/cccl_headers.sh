#!/usr/bin/env bash
# The newest CCCL headers that PyPI offers (nvidia-cuda-cccl), for the baselines of operations the
# toolkit's CCCL lacks (DeviceTopK, DeviceBatchedTopK, DeviceFind's bounds): downloaded here into
# .cccl/ (git-ignored), carried to the GPU machine with `carry: [.cccl]`.
# Usage: tools/bench/cccl_headers.sh [VERSION]   (from anywhere; default 13.3.5.0.6, CCCL 3.5.0)
# Prints the include directory; build a baseline with -I"$(tools/bench/cccl_headers.sh)" ahead of
# the toolkit's headers. The report names the version from CCCL_VERSION in that directory.
source "$(dirname "$0")/../dev/help.sh" "$@"
set -euo pipefail
cd "$(dirname "$0")/../.."
version="${1:-13.3.5.0.6}"
include=".cccl/nvidia/cu13/include/cccl"
if [ ! -f "$include/cuda/std/__cccl/version.h" ]; then
  mkdir -p .cccl
  python3 -m pip download -q --no-deps --disable-pip-version-check -d .cccl/wheel "nvidia-cuda-cccl==$version" >&2
  python3 -m zipfile -e .cccl/wheel/nvidia_cuda_cccl-"$version"-*.whl .cccl >&2
  rm -rf .cccl/wheel
fi
echo "$PWD/$include"

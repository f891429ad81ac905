#!/usr/bin/env bash
# Installs gpuk's build dependencies from Debian/Ubuntu packages, when they are missing.
# The CUDA toolkit (nvcc, NVRTC, CUB) is expected at /usr/local/cuda (or $CUDA_HOME).
set -euo pipefail
# clang, its runtimes (libFuzzer, sanitizers) and libomp: the sanitizer and fuzzing stage.
# slurm-wlm and munge: the Slurm test of a sharded tuning matrix (tests/tune/slurm_shards.sh).
packages="cmake ninja-build g++ libyaml-cpp-dev libcli11-dev doctest-dev nlohmann-json3-dev clang libclang-rt-dev libomp-dev slurm-wlm munge"
missing=""
for p in $packages; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing:$missing"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi
cuda="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -x "$cuda/bin/nvcc" ]; then
  echo "gpuk needs the CUDA toolkit (nvcc, NVRTC, CUB): none found at $cuda; install it or set CUDA_HOME" >&2
  exit 1
fi

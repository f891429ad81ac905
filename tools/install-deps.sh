#!/usr/bin/env bash
# Installs gpuk's build dependencies from Debian/Ubuntu packages, when they are missing, and the
# Python package's (nanobind, scikit-build-core, pytest, numpy) from PyPI into .venv/.
# The CUDA toolkit (nvcc, NVRTC, CUB) is expected at /usr/local/cuda (or $CUDA_HOME).
# Usage: tools/install-deps.sh   (from anywhere; no arguments; sudo for apt-get when it is missing something)
source "$(dirname "$0")/dev/help.sh" "$@"
set -euo pipefail
cd "$(dirname "$0")/.."
# clang, its runtimes (libFuzzer, sanitizers) and libomp: the sanitizer and fuzzing stage.
packages="cmake ninja-build g++ libyaml-cpp-dev libcli11-dev doctest-dev nlohmann-json3-dev clang libclang-rt-dev libomp-dev"
# python3-dev and python3-venv: the Python package's headers and its virtual environment.
packages="$packages python3 python3-dev python3-venv"
# slurm-wlm and munge: the Slurm test of a sharded tuning matrix (tests/tune/slurm_shards.sh).
packages="$packages slurm-wlm munge"
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

# The Python package: its build and test packages from PyPI, in a virtual environment (Debian's
# Python refuses a global pip install). CMake finds .venv/bin/python first (python/CMakeLists.txt).
python_packages="nanobind>=2.0 scikit-build-core>=0.10 pytest numpy"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
if ! .venv/bin/python -c "import nanobind, scikit_build_core, pytest, numpy" 2>/dev/null; then
  echo "installing into .venv: $python_packages"
  .venv/bin/python -m pip install -q --disable-pip-version-check $python_packages
fi

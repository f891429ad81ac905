#!/usr/bin/env bash
# The quick start: install what is missing, build, install the Python package into .venv/
# (`pip install .`: scikit-build-core over the same CMake), and run the argmax-with-index experiment.
# On a machine without a GPU the run cannot happen; that is said, and setup still succeeds
# (exit 0) when everything it could do did.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset default
cmake --build --preset default
# The Python package, with the library, plugins and kernels inside it (pyproject.toml).
.venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation .
echo "setup: the Python package is installed in .venv/ (source .venv/bin/activate; python -c 'import gpuk')"
status=0
build/gpuk run configs/argmax.yaml || status=$?
if [ "$status" -eq 5 ]; then  # gpuk's exit status for "no NVIDIA driver or no GPU" (README.md, Exit status)
  echo "setup: built; the example run needs an NVIDIA GPU and this machine has none, so nothing ran."
  echo "setup: without a GPU, 'build/gpuk check' compiles every kernel with NVRTC, and tools/test.sh runs the CPU and JIT tests."
  exit 0
fi
exit "$status"

#!/usr/bin/env bash
# The quick start: install what is missing, then ONE CMake build, in build/, of the library, the
# CLI (build/gpuk), the plugins and the Python module, installed as the Python package into .venv/
# (scikit-build-core pointed at build/: `pip install .` builds the wheel from that build, with the
# `gpuk` console script), and run the argmax-with-index experiment. tools/test.sh later builds the
# tests in the same build/. On a machine without a GPU the run cannot happen; that is said, and
# setup still succeeds (exit 0) when everything it could do did.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cores=$(nproc 2>/dev/null || echo 2)
# 112 compilations (core, CLI, plugins, module): about 6 minutes on 2 cores, from scratch; less
# with more cores, seconds when build/ or the compiler cache (ccache, if CMAKE_CXX_COMPILER_LAUNCHER
# names it) has them.
echo "setup: building the library, CLI, plugins and Python module in build/ (one build; from scratch about $(( (12 + cores - 1) / cores )) minutes on $cores cores)"
start=$SECONDS
cmake --preset default >/dev/null
# The wheel's build is build/ itself, configured as the preset configures it (tests and examples
# on, as test.sh builds them later); build.targets in pyproject.toml builds what the package needs.
.venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation \
  -C build-dir=build -C cmake.define.BUILD_TESTING=ON -C cmake.define.GPUK_EXAMPLES=ON .
# scikit-build-core left its temporary wheel prefix and its variables in build/'s cache: a plain
# `cmake --install build` goes to CMake's default prefix again.
cmake -S . -B build -U 'SKBUILD*' -U CMAKE_INSTALL_PREFIX >/dev/null
echo "setup: built in $(( (SECONDS - start) / 60 )) min $(( (SECONDS - start) % 60 )) s; the Python package is installed in .venv/ (source .venv/bin/activate; python -c 'import gpuk'; gpuk list)"
status=0
build/gpuk run configs/argmax.yaml || status=$?
if [ "$status" -eq 5 ]; then  # gpuk's exit status for "no NVIDIA driver or no GPU" (README.md, Exit status)
  echo "setup: built; the example run needs an NVIDIA GPU and this machine has none, so nothing ran."
  echo "setup: without a GPU, 'build/gpuk check' compiles every kernel with NVRTC, and tools/test.sh runs the CPU and JIT tests."
  exit 0
fi
exit "$status"

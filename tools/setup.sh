#!/usr/bin/env bash
# The quick start: install what is missing, build, and run the argmax-with-index experiment.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset default
cmake --build --preset default
build/gpuk run configs/argmax.yaml

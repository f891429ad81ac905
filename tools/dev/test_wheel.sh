#!/usr/bin/env bash
# The Python wheel end to end: `pip wheel .`, a fresh virtual environment with only the wheel
# installed in it, then, from a directory outside the checkout: an argmax, `gpuk list` and
# `python -m gpuk list`, the pytest suite, the
# examples (examples/python/), and with --bench the host overhead per call beside the C++
# figure (tools/bench/bench_api.py, build-wheel/*/bench_api). On a machine without a GPU the GPU tests
# and the examples skip; the build, the install and the CPU tests still run.
#
#   tools/dev/test_wheel.sh [--bench] [--out DIR]      (PYTHON: the building Python, default .venv's)
#
# The building Python needs nanobind and scikit-build-core (tools/install-deps.sh puts them in
# .venv/). Its site-packages stay visible in the new environment through a .pth file placed after
# the environment's own, so NumPy, pytest and whatever frameworks it has (PyTorch, CuPy, JAX) are
# there, and `gpuk` comes from the wheel alone.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
bench=0
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bench) bench=1 ;;
    --out) out="$2"; shift ;;
    *) echo "usage: tools/dev/test_wheel.sh [--bench] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
python=${PYTHON:-.venv/bin/python}
[ -x "$python" ] || python=$(command -v python3)
work=$(mktemp -d)
out=${out:-$work/out}
mkdir -p "$out"

echo "== pip wheel . ($("$python" --version))"
"$python" -m pip wheel -q --no-build-isolation --no-deps -w "$work/dist" . 2>&1 | tail -20
wheel=$(ls "$work"/dist/gpuk-*.whl)
echo "wheel: $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"
"$python" -m zipfile -l "$wheel" | awk '{print $1}' | grep -E '^gpuk/(bin/gpuk|lib/libgpuk_core.so|lib/gpuk/plugins/|share/gpuk/kernels/reduce/onepass.cu|_gpuk)' | sort | head -12

echo "== a fresh virtual environment"
"$python" -m venv --without-pip "$work/venv"
venv_python="$work/venv/bin/python"
site=$("$venv_python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
"$python" -c "import sys; print('\n'.join(p for p in sys.path if p.endswith('-packages')))" > "$site/zz_building_python.pth"
if "$venv_python" -c "import gpuk" 2>/dev/null; then
  echo "gpuk is importable before the wheel is installed: the environment is not fresh" >&2
  exit 1
fi
"$python" -m pip --python "$venv_python" install -q --no-deps --no-index "$wheel"

elsewhere="$work/elsewhere"
mkdir -p "$elsewhere"
cd "$elsewhere"
export GPUK_CACHE_DIR="$work/cache"
status=0
echo "== gpuk.reduce.argmax from $elsewhere"
"$venv_python" - <<'EOF' || status=$?
import numpy as np, gpuk  # NumPy first, as most programs do
print("gpuk", gpuk.__version__, "from", gpuk.__file__)
print("CLI", gpuk.executable(), "kernels", len(gpuk.kernels()))
x = np.random.default_rng(0).standard_normal(250_000).astype(np.float32)
try:
    best = gpuk.reduce.argmax(x)
except gpuk.NoDeviceError as e:
    print("no GPU:", e)
else:
    assert best.index == int(np.argmax(x)), (best, int(np.argmax(x)))
    print("argmax", best, "on", gpuk.device_info()["name"], "ok")
EOF

echo "== gpuk list and python -m gpuk list from $elsewhere (the console script and the module entry point)"
for command in "$work/venv/bin/gpuk" "$venv_python -m gpuk"; do
  if $command list >"$out/list.txt" 2>&1 && grep -q "^Families" "$out/list.txt"; then
    echo "$command list: ok"
  else
    echo "$command list: FAILED" >&2; cat "$out/list.txt" >&2; status=1
  fi
done

echo "== pytest"
# pytest run inside the environment, as a user would.
"$venv_python" -c "import sys, pytest; sys.exit(pytest.main(['-q', '-rs', '-p', 'no:cacheprovider', '$repo/python/tests']))" \
  2>&1 | tee "$out/pytest.txt" || status=$?

if "$venv_python" -c "import gpuk; gpuk.device_info()" 2>/dev/null; then
  for example in "$repo"/examples/python/*.py; do
    echo "== $(basename "$example")"
    timeout 300 "$venv_python" "$example" 2>&1 | tee "$out/$(basename "$example" .py).txt" || status=$?
  done
  if [ "$bench" = 1 ]; then
    echo "== tools/bench/bench_api.py"
    # The wheel's build builds what the package needs (pyproject.toml's build.targets); the C++
    # figure's program is built in the same build directory.
    wheel_build=$(ls -d "$repo"/build-wheel/*/ | head -1)
    cmake --build "$wheel_build" --target bench_api >/dev/null || status=$?
    cpp=$(ls "$wheel_build"bench_api 2>/dev/null | head -1 || true)
    "$venv_python" "$repo/tools/bench/bench_api.py" --cpp "${cpp:-none}" 2>&1 | tee "$out/bench_api.txt" || status=$?
  fi
else
  echo "no GPU: the examples and the benchmark did not run"
fi
exit $status

"""gpuk._gpuk.tune_kernel (the binding of gpuk/tuning.hpp) without a GPU: whole sweeps on the driver
whose device memory is host memory and whose launches do nothing (tests/api/fake_driver.cpp, built
as build/tests/fake_memory_driver/libcuda.so.1). The driver is found when a process starts, so each
case runs Python in a child process with that driver first on LD_LIBRARY_PATH. A launch writes
nothing: an output keeps its poison (0xA5 bytes), the answer these tests give when they want a pass.
"""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gpuk

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "tests" / "declared" / "kernels"


def fake_driver_dir():
    build = Path(gpuk._gpuk.__file__).parent.parent.parent  # build/python/gpuk/_gpuk*.so
    d = build / "tests" / "fake_memory_driver"
    return d if (d / "libcuda.so.1").exists() else None


def run_child(body, tmp_path):
    d = fake_driver_dir()
    if d is None:
        pytest.skip("the fake driver is not built (cmake --build build --target gpuk_fake_memory_driver)")
    script = "import json, sys, numpy as np\nimport gpuk\nfrom gpuk import _gpuk\n" + textwrap.dedent(body)
    env = dict(os.environ, LD_LIBRARY_PATH=f"{d}:{os.environ.get('LD_LIBRARY_PATH', '')}",
               GPUK_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


CONFIG = f"""
def config(**extra):
    c = {{"kernel_dirs": [{str(KERNELS)!r}], "family": "kernel", "kernels": ["scale2d"],
         "sizes": {{"nx": 100, "ny": 30}}, "params": {{"block_size_x": [16, 64], "block_size_y": [1, 8]}},
         "warmup": 1, "repeats": 3, "recheck": {{"top": 2, "repeats": 3}}}}
    c.update(extra)
    return c
poison = np.frombuffer(b"\\xa5" * 4 * 3000, dtype=np.float32)
x = np.linspace(-1, 1, 3000, dtype=np.float32)
"""


def test_answers_inputs_and_result_form(tmp_path):
    r = run_child(CONFIG + """
r = _gpuk.tune_kernel(config(), {"in": x}, {"out": poison}, {}, None, None, None, True)
print(json.dumps(r))
""", tmp_path)
    assert set(r) >= {"results", "best", "device", "notes", "strategy", "wall_seconds", "compile"}
    assert len(r["results"]) == 4
    assert r["best"] is not None and r["best"] == r["ranking"][0]
    assert r["strategy"] == "exhaustive"
    assert set(r["device"]) >= {"name", "arch", "sm_count"}
    assert r["compile"]["programs"] == 4
    seconds = r["seconds"]  # where the sweep's time went
    assert {"start", "data", "compile_wall", "measure", "verify", "other", "total"} <= set(seconds)
    assert seconds["total"] > 0 and seconds["compile_wall"] > 0
    assert seconds["measure"] + seconds["verify"] <= seconds["total"]
    for v in r["results"]:
        assert v["status"] == "ok", v["reason"]
        assert v["verified"] is True
        assert v["time"] > 0 and len(v["times"]) >= 3
        assert set(v["params"]) == {"block_size_x", "block_size_y"}
        assert "Gelem/s" in v["metrics"]
        for key in ("compile_time", "verification_time", "benchmark_time"):
            assert v[key] >= 0


def test_wrong_answer_no_answer_and_points(tmp_path):
    r = run_child(CONFIG + """
wrong = _gpuk.tune_kernel(config(), {"in": x}, {"out": np.ones(3000, np.float32)}, {}, None, None, None, True)
first = _gpuk.tune_kernel(config(), {"in": x}, {}, {}, None, None, None, True)
points = _gpuk.tune_kernel(config(points=[{"block_size_x": 64, "block_size_y": 1}]), {"in": x}, {}, {}, None,
                           None, None, True)
print(json.dumps({"wrong": wrong, "first": first, "points": points}))
""", tmp_path)
    assert {v["status"] for v in r["wrong"]["results"]} == {"wrong answer"}
    assert r["wrong"]["best"] is None
    assert all(v["verified"] is False for v in r["wrong"]["results"])
    assert any("no answer given: verified against the first variant's outputs" in n for n in r["first"]["notes"])
    assert {v["status"] for v in r["first"]["results"]} == {"ok"}
    statuses = sorted(v["status"] for v in r["points"]["results"])
    assert statuses == ["ok", "pruned", "pruned", "pruned"]


def test_verify_function_and_errors(tmp_path):
    r = run_child(CONFIG + """
seen = []
def reject(expected, got):
    seen.append(sorted(got))
    return (False, "total off by %d" % got["out"].size)
rejected = _gpuk.tune_kernel(config(), {"in": x}, {"out": poison}, {}, reject, None, None, True)
errors = []
for bad in ({"in": x[:7]}, {"nope": x}):
    try:
        _gpuk.tune_kernel(config(), bad, {}, {}, None, None, None, True)
    except gpuk.ConfigError as e:
        errors.append(str(e))
try:
    _gpuk.tune_kernel(config(bogus=1), {}, {}, {}, None, None, None, True)
except gpuk.ConfigError as e:
    errors.append(str(e))
print(json.dumps({"rejected": rejected, "errors": errors}))
""", tmp_path)
    assert {v["status"] for v in r["rejected"]["results"]} == {"wrong answer"}
    assert all("total off by 3000" in v["reason"] for v in r["rejected"]["results"])
    errors = r["errors"]
    assert len(errors) == 3
    assert "holds 7 float32 elements" in errors[0]
    assert "'nope' is not an input array of scale2d" in errors[1]
    assert "bogus" in errors[2]

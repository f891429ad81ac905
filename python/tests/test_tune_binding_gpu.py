"""gpuk._gpuk.tune_kernel on a GPU (skipped without one): every variant of the tests' declared
kernels verified against NumPy, a wrong answer refused everywhere, the first variant as the answer,
a verify function, and variants that fault ending only their worker process, twice in one process.
The `gpu` fixture starts CUDA in pytest's process, where the call sweeps in-process (one case checks
that road); the others run in a fresh Python process, where it forks its workers.
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from gpuk import _gpuk

REPO = Path(__file__).resolve().parents[2]
DECLARED = str(REPO / "tests" / "declared" / "kernels")
FAULTY = str(REPO / "tests" / "data" / "kernels")
NX, NY = 1001, 299  # odd sizes: partial blocks at both edges


def scale2d(**extra):
    c = {"kernel_dirs": [DECLARED], "family": "kernel", "kernels": ["scale2d"], "sizes": {"nx": NX, "ny": NY},
         "params": {"block_size_x": [16, 32, 64], "block_size_y": [1, 2, 4, 8]}, "warmup": 2, "repeats": 10}
    c.update(extra)
    return c


def data():
    rng = np.random.default_rng()
    x = rng.uniform(-1e3, 1e3, NX * NY).astype(np.float32)
    x[:4] = [0.0, -0.0, np.float32(1e-38), -7.5]
    return x, (np.float32(0.5) * x).astype(np.float32)


def ok_and_verified(r, n):
    assert len(r["results"]) == n
    for v in r["results"]:
        assert v["status"] == "ok", (v["params"], v["reason"])
        assert v["verified"] is True
        assert v["time"] > 0 and len(v["times"]) >= 10
    assert r["best"] is not None
    assert not any("CUDA was started in this process" in n for n in r["notes"])


def in_fresh_process(name):
    here = os.path.dirname(os.path.abspath(__file__))
    code = f"import sys; sys.path.insert(0, {here!r}); import test_tune_binding_gpu as m; m.{name}()"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_variant_verified_against_numpy(gpu):
    in_fresh_process("every_variant_verified_against_numpy")


def test_first_variant_as_answer_and_a_verify_function(gpu):
    in_fresh_process("first_variant_as_answer_and_a_verify_function")


def test_faulting_variants_end_only_their_worker_twice_in_one_process(gpu):
    in_fresh_process("faulting_variants_end_only_their_worker_twice_in_one_process")


def test_in_a_process_that_started_cuda_the_sweep_runs_in_it(gpu):
    x, expected = data()
    r = _gpuk.tune_kernel(scale2d(), {"in": x}, {"out": expected}, {}, None, None, None, True)
    assert {v["status"] for v in r["results"]} == {"ok"}
    assert all(v["verified"] is True for v in r["results"])
    assert any("CUDA was started in this process before the sweep" in n for n in r["notes"])


def every_variant_verified_against_numpy():
    x, expected = data()
    r = _gpuk.tune_kernel(scale2d(), {"in": x}, {"out": expected}, {}, None, None, None, True)
    ok_and_verified(r, 12)
    best = r["results"][r["best"]]
    assert best["metrics"]["GB/s"] > 0

    wrong = expected.copy()
    wrong[NX * NY - 1] += 1.0  # the last element: written by the grid's last, partial block
    r = _gpuk.tune_kernel(scale2d(), {"in": x}, {"out": wrong}, {}, None, None, None, True)
    assert {v["status"] for v in r["results"]} == {"wrong answer"}
    assert all(f"first at index {NX * NY - 1}" in v["reason"] for v in r["results"])
    assert r["best"] is None


def first_variant_as_answer_and_a_verify_function():
    x, expected = data()
    r = _gpuk.tune_kernel(scale2d(), {"in": x}, {}, {}, None, None, None, True)
    ok_and_verified(r, 12)
    assert any("verified against the first variant's outputs (scale2d block_size_x=16 block_size_y=1)" in n
               for n in r["notes"])

    def totals(e, got):
        assert set(got) == {"out"} and got["out"].dtype == np.float32 and got["out"].size == NX * NY
        return bool(np.array_equal(got["out"], e["out"])), "element-wise by NumPy"
    r = _gpuk.tune_kernel(scale2d(), {"in": x}, {"out": expected}, {}, totals, None, None, True)
    ok_and_verified(r, 12)


def faulting_variants_end_only_their_worker_twice_in_one_process():
    config = {"kernel_dirs": [FAULTY], "family": "kernel", "kernels": ["stencil2d_faulty"],
              "sizes": {"nx": 513, "ny": 257}, "params": {"block_size_x": [32], "block_size_y": [8], "fault": [0, 1, 2]},
              "warmup": 1, "repeats": 5}
    for _ in range(2):
        r = _gpuk.tune_kernel(config, {}, {}, {}, None, None, None, True)
        status = {v["params"]["fault"]: v["status"] for v in r["results"]}
        assert status == {0: "ok", 1: "faulted", 2: "faulted"}, [v["reason"] for v in r["results"]]
        assert r["results"][r["best"]]["params"]["fault"] == 0
        assert not any("CUDA was started in this process" in n for n in r["notes"])

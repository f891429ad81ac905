#!/usr/bin/env python3
"""The Python call against the command line: one space tuned by `gpuk.kernel_tuner.tune_kernel`
and by `gpuk tune` of the config that call hands to gpuk's tuner, one after the other, REPS times.

    python3 tools/bench/bench_kt_call.py GPUK_BINARY [REPS]     (gpuk's Python package importable)

Kernel Tuner's vector_add (10^7 floats, block_size_x 128..1024, 15 configurations). Both verify
against the same answer (c = a + b, a and b unchanged), so both do the same work; each run has a
fresh cache directory (cold NVRTC) and the command line's journal is fresh. The wall of the Python
call is `tune_kernel` from call to return (the script's imports and data excluded); the command
line's is the process, start to exit, its .npy files written beforehand. Prints one row per
repeat and the medians.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SOURCE = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) { c[i] = a[i] + b[i]; }
}
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("gpuk", help="the gpuk binary (its build's Python package importable)")
    ap.add_argument("reps", nargs="?", type=int, default=3, help="repeats (default 3)")
    opts = ap.parse_args()
    gpuk, reps = opts.gpuk, opts.reps
    import numpy as np
    from gpuk.kernel_tuner import interface, tune_kernel
    n = 10_000_000
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.zeros_like(a)
    answer = [a + b, a.copy(), b.copy(), None]
    params = {"block_size_x": [128 + 64 * i for i in range(15)]}
    work = tempfile.mkdtemp(prefix="gpuk-kt-call-")
    captured = {}
    engine = interface._engine_tune

    def capture(t, *rest):  # the translated config, as the tuner receives it
        kernels = os.path.join(work, "kernels")
        shutil.rmtree(kernels, ignore_errors=True)
        shutil.copytree(t.kernel_dir.path, kernels)
        config = {k: v for k, v in t.config.items() if k != "kernel_dirs"}
        config["data"], expected = {}, {}
        for name, arr in t.arrays.items():
            np.save(os.path.join(work, name + ".npy"), arr)
            config["data"][name] = {"npy": os.path.join(work, name + ".npy")}
        for name, arr in t.answers.items():
            if arr is not None:
                np.save(os.path.join(work, name + "-expected.npy"), arr)
                expected[name] = os.path.join(work, name + "-expected.npy")
        config["reference"] = {"npy": expected}
        config["save"] = False
        captured["config"] = config
        s = time.perf_counter()
        out = engine(t, *rest)
        captured["engine"] = time.perf_counter() - s
        return out

    interface._engine_tune = capture
    rows = []
    for rep in range(reps):
        env_cache = os.path.join(work, f"cache-py-{rep}")
        os.environ["GPUK_CACHE_DIR"] = env_cache
        s = time.perf_counter()
        results, _ = tune_kernel("vector_add", SOURCE, n, [c, a, b, np.int32(n)], params, answer=answer, quiet=True)
        py = time.perf_counter() - s
        py_ok = sum(1 for r in results if "time" in r and not isinstance(r.get("time"), str))
        with open(os.path.join(work, "tune.yaml"), "w") as f:
            json.dump(captured["config"], f)
        s = time.perf_counter()
        p = subprocess.run([gpuk, "--kernels", os.path.join(work, "kernels"), "--cache-dir",
                            os.path.join(work, f"cache-cli-{rep}"), "tune", os.path.join(work, "tune.yaml"),
                            "--fresh", "--no-save"], capture_output=True, text=True)
        cli = time.perf_counter() - s
        rows.append((py, captured["engine"], cli, p.returncode, py_ok))
        print(f"repeat {rep}: Python call {py:.3f} s (gpuk's tuner {captured['engine']:.3f} s, "
              f"{py_ok} configurations timed), gpuk tune {cli:.3f} s (exit {p.returncode})", flush=True)
        if p.returncode != 0:
            print(p.stdout[-800:] + p.stderr[-800:])
    print(f"median: Python call {statistics.median(r[0] for r in rows):.3f} s, gpuk tune "
          f"{statistics.median(r[2] for r in rows):.3f} s, difference "
          f"{statistics.median(r[0] - r[2] for r in rows):+.3f} s")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r[3] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

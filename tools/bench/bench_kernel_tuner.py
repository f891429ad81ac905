#!/usr/bin/env python3
"""Kernel Tuner and gpuk on Kernel Tuner's own example kernels and spaces, in one process run.

    python3 tools/bench/bench_kernel_tuner.py KT_EXAMPLES_DIR [--only stencil,spmv] [--no-kt]

KT_EXAMPLES_DIR is Kernel Tuner's examples/cuda folder (its .cu files and vector_add.py, read from
there: nothing of Kernel Tuner is part of gpuk). For each example, with the sizes and the space of
its script (convolution and pnpoly: a smaller space, said in the table): Kernel Tuner's
`tune_kernel` (when `kernel_tuner` is installed) and gpuk's (`gpuk.kernel_tuner`) on the same
arrays, each in a process of its own (CUDA does not survive the fork of gpuk's workers from a
process where Kernel Tuner started it), timed from the call to its return with cold caches
(CUDA_CACHE_DISABLE=1, a fresh GPUK_CACHE_DIR); then, in a third process, both winners re-timed
by gpuk in one run (a
space of the two points, 100 iterations), and each winner's outputs checked against a NumPy
reference (given to a gpuk tune of that point as its answer), or, where there is none (pnpoly),
against the space's first configuration (gpuk compares a variant with the first one's outputs).
Prints a Markdown table.
"""
import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __name__ == "__main__" and sys.argv[1:2] in (["-h"], ["--help"]):
    print("usage:" + __doc__.split("\n\n", 1)[1].split("\n\n", 1)[0].rstrip() + "\n\n" + __doc__.split("\n\n", 2)[2])
    sys.exit(0)  # before NumPy and gpuk are imported: --help needs neither

import numpy as np

from gpuk import kernel_tuner as gk  # no CUDA starts on import: the parent process may fork gpuk's workers

NOTES = {"convolution": "filter 15 x 15, a smaller space", "pnpoly": "the device kernel alone, a smaller space"}


def inline_kernel(script: Path) -> str:
    """The kernel string a Kernel Tuner example script holds (vector_add.py)."""
    for node in ast.walk(ast.parse(script.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "__global__" in node.value:
            return node.value
    raise SystemExit(f"{script}: no kernel string")


def vector_add(d: Path):
    size = 10000000
    rng = np.random.default_rng(1)
    a = rng.standard_normal(size).astype(np.float32)
    b = rng.standard_normal(size).astype(np.float32)
    args = [np.zeros_like(b), a, b, np.int32(size)]
    return dict(name="vector_add", source=inline_kernel(d / "vector_add.py"), problem_size=size, args=args,
                tune_params={"block_size_x": [128 + 64 * i for i in range(15)]}, options={},
                reference=lambda: a + b, atol=1e-6)


def stencil(d: Path):
    w, h = 4096, 2048
    old = np.random.default_rng(2).standard_normal(w * h).astype(np.float32)
    new = old.copy()

    def reference():
        g = old.reshape(h, w)
        out = new.reshape(h, w).copy()
        out[1:-1, 1:-1] = (g[1:-1, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:] + g[2:, 1:-1] + g[:-2, 1:-1]) / np.float32(5)
        return out.reshape(-1)

    return dict(name="stencil_kernel", source=(d / "stencil.cu").read_text(), problem_size=(w, h), args=[new, old],
                tune_params={"block_size_x": [32 * i for i in range(1, 9)], "block_size_y": [2 ** i for i in range(6)]},
                options=dict(grid_div_x=["block_size_x"], grid_div_y=["block_size_y"]), reference=reference,
                atol=1e-5)


def matmul(d: Path):
    n = 4096
    rng = np.random.default_rng(3)
    A = rng.standard_normal((n, n)).astype(np.float32)
    B = rng.standard_normal((n, n)).astype(np.float32)
    metrics = {"GFLOP/s": lambda p: (2 * n ** 3 / 1e9) / (p["time"] / 1e3)}
    return dict(name="matmul_kernel", source=(d / "matmul.cu").read_text(), problem_size=(n, n),
                args=[np.zeros_like(A), A, B],
                tune_params={"block_size_x": [16 * 2 ** i for i in range(3)], "block_size_y": [2 ** i for i in range(6)],
                             "tile_size_x": [2 ** i for i in range(4)], "tile_size_y": [2 ** i for i in range(4)]},
                options=dict(grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y", "tile_size_y"],
                             restrictions=["block_size_x==block_size_y*tile_size_y"], iterations=32, metrics=metrics),
                reference=lambda: (A @ B).reshape(-1), atol=1e-2)


def spmv(d: Path):
    nrows, ncols = 128 * 1024, 64 * 1024
    nnz = int(nrows * ncols * 0.001)
    rng = np.random.default_rng(4)
    rows = np.concatenate([[0], np.sort(rng.random(nrows - 1) * nnz), [nnz]]).astype(np.int32)
    cols = (rng.random(nnz) * ncols).astype(np.int32)
    vals = rng.standard_normal(nnz).astype(np.float32)
    x = rng.standard_normal(ncols).astype(np.float32)
    row_of = np.repeat(np.arange(nrows), np.diff(rows))
    expected = np.bincount(row_of, weights=vals.astype(np.float64) * x[cols], minlength=nrows)
    return dict(name="spmv_kernel", source=(d / "spmv.cu").read_text(), problem_size=nrows,
                args=[np.zeros(nrows, np.float32), rows, cols, vals, x, np.int32(nrows)],
                tune_params={"block_size_x": [32 * i for i in range(1, 33)], "threads_per_row": [1, 32],
                             "read_only": [0, 1]},
                options=dict(grid_div_x=["block_size_x/threads_per_row"],
                             answer=[expected.astype(np.float32), None, None, None, None, None], atol=1e-4),
                reference=lambda: expected, atol=1e-4)


def convolution(d: Path):
    n, f = 4096, 15
    rng = np.random.default_rng(5)
    image = rng.standard_normal((n + f - 1) * (n + f - 1)).astype(np.float32)
    weights = rng.standard_normal(33 * 33).astype(np.float32)

    def reference():
        src = image.reshape(n + f - 1, n + f - 1)
        out = np.zeros((n, n), np.float32)
        for i in range(f):
            for j in range(f):
                out += src[i:i + n, j:j + n] * weights[i * f + j]
        return out.reshape(-1)

    return dict(name="convolution_kernel", source=(d / "convolution.cu").read_text(), problem_size=(n, n),
                args=[np.zeros(n * n, np.float32), image, weights],
                tune_params={"filter_height": [f], "filter_width": [f], "block_size_x": [16, 32, 48, 64],
                             "block_size_y": [2, 4, 8], "tile_size_x": [1, 2], "tile_size_y": [1, 2, 4],
                             "use_padding": [0, 1], "read_only": [0, 1]},
                options=dict(grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y", "tile_size_y"],
                             restrictions=["use_padding==0 or (block_size_x % 32 != 0)"],
                             cmem_args={"d_filter": weights}),
                reference=reference, atol=1e-3)


def pnpoly(d: Path):
    size, vertices = 20000000, 600
    rng = np.random.default_rng(6)
    points = rng.standard_normal(2 * size).astype(np.float32)
    seeds = np.sort(rng.random(vertices) * 2.0 * np.pi)[::-1]
    xy = np.stack([np.cos(seeds), np.sin(seeds)], axis=1).astype(np.float32)
    prev = np.roll(xy, 1, axis=0)  # vertex j-1 (the last for j = 0), as the host code computes the slopes
    slopes = ((prev[:, 0] - xy[:, 0]) / (prev[:, 1] - xy[:, 1])).astype(np.float32)
    return dict(name="cn_pnpoly", source=(d / "pnpoly.cu").read_text(), problem_size=(size, 1),
                args=[np.zeros(size, np.int32), points, np.int32(size)],
                tune_params={"block_size_x": [64, 128, 256, 512], "tile_size": [1, 2, 4, 8],
                             "between_method": [0, 1, 2, 3], "use_precomputed_slopes": [0, 1], "use_method": [0, 1]},
                options=dict(grid_div_x=["block_size_x", "tile_size"],
                             cmem_args={"d_vertices": xy.reshape(-1), "d_slopes": slopes}),
                reference=None, atol=0)


EXAMPLES = {"vector_add": vector_add, "stencil": stencil, "matmul": matmul, "spmv": spmv,
            "convolution": convolution, "pnpoly": pnpoly}


def tune(tool, e):
    start = time.perf_counter()
    results, env = tool.tune_kernel(e["name"], e["source"], e["problem_size"], e["args"], e["tune_params"],
                                    quiet=True, **e["options"])
    wall = time.perf_counter() - start
    best = env.get("best_config")
    return {"wall": wall, "n": len(results), "best": {k: int(best[k]) for k in e["tune_params"]} if best else None}


def key(e, p):
    return tuple(p[k] for k in e["tune_params"])


def points_tune(e, points, **extra):
    """gpuk's tune of exactly these points (in this order), with the example's options."""
    values = {k: sorted({p[k] for p in points}) for k in e["tune_params"]}
    wanted = [key(e, p) for p in points]
    options = {k: v for k, v in e["options"].items() if k not in ("restrictions", "iterations")}
    options.update(extra)
    results, _ = gk.tune_kernel(e["name"], e["source"], e["problem_size"], e["args"], values,
                                restrictions=lambda p: key(e, p) in wanted, quiet=True, **options)
    return {key(e, r): r for r in results}


def retime(e, points):
    """Both winners timed by gpuk in one run: a space of exactly these points, 100 iterations."""
    points = [p for p in points if p]
    if not points:
        return {}
    return {",".join(map(str, k)): r["time"] for k, r in points_tune(e, points, iterations=100).items()
            if "__error__" not in r}


def verified(e, point, expected):
    """The winner's outputs against the NumPy reference (as an answer, in a tune of that point),
    or, without one, against the space's first configuration (gpuk compares every variant with
    the first one's outputs)."""
    if point is None:
        return "no winner"
    if expected is not None:
        answer = [expected.astype(e["args"][0].dtype)] + [None] * (len(e["args"]) - 1)
        r = points_tune(e, [point], answer=answer, atol=e["atol"])[key(e, point)]
        return "yes" if "__error__" not in r else "NO: " + r["__error__"].reason[:100].replace("|", "\\|")
    first = dict(zip(e["tune_params"], (v[0] for v in e["tune_params"].values())))
    if key(e, first) == key(e, point):
        return "yes (it is the first configuration)"
    r = points_tune(e, [first, point]).get(key(e, point))
    return "yes, as the first configuration" if r and "__error__" not in r else "NO"


def child(role, name, examples, points=None):
    """One tool's work on one example in a process of its own; its JSON answer."""
    cmd = [sys.executable, __file__, str(examples), "--only", name, "--child", role, "--points", json.dumps(points)]
    with tempfile.TemporaryDirectory(prefix="gpuk-bench-kt-") as cache:
        env = dict(os.environ, CUDA_CACHE_DISABLE="1", GPUK_CACHE_DIR=cache)
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout + p.stderr, file=sys.stderr)
        raise SystemExit(f"{role} on {name} failed (exit {p.returncode})")
    return json.loads(p.stdout.strip().splitlines()[-1])


def in_child(role, e, points):
    if role == "kt":
        import kernel_tuner as kt
        return tune(kt, e)
    if role == "gpuk":
        return tune(gk, e)
    expected = np.asarray(e["reference"](), np.float64).reshape(-1) if e["reference"] else None
    return {"times": retime(e, points), "verified": [verified(e, p, expected) for p in points]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("examples", type=Path, help="Kernel Tuner's examples/cuda folder")
    parser.add_argument("--only", default=",".join(EXAMPLES), help="examples, comma-separated")
    parser.add_argument("--no-kt", action="store_true", help="gpuk alone")
    parser.add_argument("--child", choices=["kt", "gpuk", "check"], help=argparse.SUPPRESS)
    parser.add_argument("--points", default="null", help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.child:
        print(json.dumps(in_child(a.child, EXAMPLES[a.only](a.examples), json.loads(a.points))))
        return
    use_kt = not a.no_kt
    if use_kt and subprocess.run([sys.executable, "-c", "import kernel_tuner"], capture_output=True).returncode:
        print("kernel_tuner is not installed: gpuk alone", file=sys.stderr)
        use_kt = False
    rows = ["| example | configurations KT / gpuk | Kernel Tuner wall (s) | gpuk wall (s) | KT winner | gpuk winner "
            "| KT winner, gpuk-timed (ms) | gpuk winner, gpuk-timed (ms) | KT winner verified | gpuk winner verified |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for name in a.only.split(","):
        if name not in EXAMPLES:
            raise SystemExit(f"no example {name!r}; examples: {', '.join(EXAMPLES)}")
        k = child("kt", name, a.examples) if use_kt else {"wall": None, "n": "-", "best": None}
        g = child("gpuk", name, a.examples)
        c = child("check", name, a.examples, [p for p in (k["best"], g["best"]) if p])
        checked = dict(zip([json.dumps(p) for p in (k["best"], g["best"]) if p], c["verified"]))
        show = lambda p: " ".join(f"{x}={v}" for x, v in p.items()) if p else "-"
        ms = lambda p: c["times"].get(",".join(map(str, p.values()))) if p else None
        timed = lambda p: f"{ms(p):.4f}" if ms(p) is not None else "-"
        verdict = lambda p: checked.get(json.dumps(p), "no winner") if p else "no winner"
        label = name + (f" ({NOTES[name]})" if name in NOTES else "")
        k_wall = f"{k['wall']:.2f}" if k["wall"] is not None else "-"
        rows.append(f"| {label} | {k['n']} / {g['n']} | {k_wall} | {g['wall']:.2f} | {show(k['best'])} | "
                    f"{show(g['best'])} | {timed(k['best'])} | {timed(g['best'])} | "
                    f"{verdict(k['best']) if use_kt else '-'} | {verdict(g['best'])} |")
        print(rows[-1], file=sys.stderr, flush=True)
    print("\n".join(rows))


if __name__ == "__main__":
    main()

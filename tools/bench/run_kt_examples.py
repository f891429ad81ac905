#!/usr/bin/env python3
"""Kernel Tuner's own example scripts, run through gpuk with only their import lines changed.

    python3 tools/bench/run_kt_examples.py KT_EXAMPLES_DIR [--only stencil,matmul] [--timeout S]
                                           [--kernel-tuner] [--outputs DIR]

KT_EXAMPLES_DIR is Kernel Tuner's examples/cuda folder. Each script is copied with the folder's
.cu files into a fresh directory, its `kernel_tuner` imports are rewritten to `gpuk.kernel_tuner`
(every other line is left as it is, and the count of changed lines is printed), and it runs
there with cold caches (CUDA_CACHE_DISABLE=1, a fresh GPUK_CACHE_DIR), under a time limit. The
table gives its exit status, its wall time and the last line it printed; where the script writes
a results file (matmul.json, reduce.json, ...), the number of configurations in it, how many
failed and the median of their `compile_time` (Kernel Tuner: NVRTC to PTX and the driver's load,
one configuration at a time; gpuk: the sweep's compile wall time, NVRTC to cubins on all its
compile threads side by side, divided by the configurations compiled). --kernel-tuner runs the scripts unchanged instead (Kernel Tuner must be importable), for
the same table beside it.

Under NumPy 2, spmv.py's `nrows*ncols*0.001` multiplies a numpy.int32 and overflows to 0
non-zeros (NEP 50); that one line is widened to Python integers for both tools alike (PATCHES),
and counted among the lines changed. --outputs DIR keeps each script's output as DIR/NAME-TOOL.txt and its results files as
DIR/NAME-TOOL-FILE.json.

Before the first script, the tool's modules are imported once, untimed (`import numpy,
kernel_tuner` or `gpuk.kernel_tuner`, and scipy): Python writes their bytecode then, so that
neither tool's first timed script pays for compiling its modules and the other's not.

pnpoly.py is not run: it tunes host code through PyCUDA (its device kernel with its __constant__
vertices is tuned by tools/bench/bench_kernel_tuner.py). convolution.py's space has 3.1 million
configurations (KT's own script is not meant to finish); it runs only when named in --only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPTS = ["vector_add", "stencil", "zeromeanfilter", "spmv", "matmul", "expdist", "reduction"]
ON_REQUEST = ["convolution"]
IMPORTS = [  # (pattern, replacement) on whole lines
    (re.compile(r"^(\s*)import kernel_tuner\s*$"), r"\1from gpuk import kernel_tuner"),
    (re.compile(r"^(\s*)from kernel_tuner(\.\w+)? import (.*)$"), r"\1from gpuk.kernel_tuner\2 import \3"),
]
# (script, line as written, the line both tools run): a script that breaks under NumPy 2 by itself.
PATCHES = [
    ("spmv", "    nnz = int(nrows*ncols*0.001)", "    nnz = int(int(nrows)*ncols*0.001)"),
]


def patch(name: str, text: str) -> tuple[str, int]:
    """The script with PATCHES applied (for every tool alike); the changed-line count."""
    changed = 0
    for script, before, after in PATCHES:
        if script == name and before + "\n" in text:
            text = text.replace(before + "\n", after + "\n")
            changed += 1
    return text, changed


def rewrite(text: str) -> tuple[str, int]:
    """The script with its kernel_tuner imports pointing at gpuk.kernel_tuner; the changed-line count."""
    lines, changed = [], 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        for pattern, repl in IMPORTS:
            if pattern.match(body):
                body = pattern.sub(repl, body)
                changed += 1
                break
        lines.append(body + ("\n" if line.endswith("\n") else ""))
    return "".join(lines), changed


def results_summary(work: Path) -> str:
    """Configurations and failures in the JSON files a script wrote (Kernel Tuner's form)."""
    out = []
    for f in sorted(work.glob("*.json")):
        try:
            data = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, list) and data and isinstance(data[0], list):
            data = data[0]  # (results, env) dumped as one list
        if not isinstance(data, list):
            continue
        rows = [r for r in data if isinstance(r, dict)]
        failed = sum(1 for r in rows if not isinstance(r.get("time"), (int, float)))
        compiles = sorted(r["compile_time"] for r in rows if isinstance(r.get("compile_time"), (int, float)))
        median = f", compile_time median {compiles[len(compiles) // 2]:.0f} ms" if compiles else ""
        out.append(f"{f.name}: {len(rows)} configurations, {failed} failed{median}")
    return "; ".join(out)


def run(name: str, src: Path, timeout: float, kernel_tuner: bool, outputs: Path | None) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"kt-{name}-"))
    for cu in src.glob("*.cu"):
        shutil.copy(cu, work)
    script, changed = patch(name, src.joinpath(f"{name}.py").read_text())
    if not kernel_tuner:
        script, imports = rewrite(script)
        changed += imports
    work.joinpath(f"{name}.py").write_text(script)
    env = dict(os.environ, CUDA_CACHE_DISABLE="1", GPUK_CACHE_DIR=str(work / "cache"), PYTHONUNBUFFERED="1")
    start = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, f"{name}.py"], cwd=work, env=env, capture_output=True, text=True,
                           timeout=timeout)
        status, output = str(p.returncode), p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        status = f"timeout ({timeout:g} s)"
        output = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
    wall = time.perf_counter() - start
    work.joinpath("output.txt").write_text(output)
    if outputs is not None:
        outputs.mkdir(parents=True, exist_ok=True)
        tool = "kernel_tuner" if kernel_tuner else "gpuk"
        outputs.joinpath(f"{name}-{tool}.txt").write_text(output)
        for f in work.glob("*.json"):
            shutil.copy(f, outputs / f"{name}-{tool}-{f.name}")
    last = next((l.strip() for l in reversed(output.splitlines()) if l.strip()), "")
    return dict(name=name, changed=changed, status=status, wall=wall, last=last[:160],
                results=results_summary(work), dir=str(work))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("examples", type=Path, help="Kernel Tuner's examples/cuda folder")
    ap.add_argument("--only", default="", help="comma-separated script names (without .py)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per script (default 600)")
    ap.add_argument("--kernel-tuner", action="store_true", help="run the scripts unchanged, with Kernel Tuner")
    ap.add_argument("--outputs", type=Path, help="keep each script's output and results files in OUTPUTS")
    a = ap.parse_args()
    names = [n for n in a.only.split(",") if n] or SCRIPTS
    for n in names:
        if n not in SCRIPTS + ON_REQUEST:
            ap.error(f"unknown script {n!r}; known: {', '.join(SCRIPTS + ON_REQUEST)}")
        if not (a.examples / f"{n}.py").is_file():
            ap.error(f"{a.examples / (n + '.py')} does not exist")
    tool = "Kernel Tuner (unchanged)" if a.kernel_tuner else "gpuk.kernel_tuner (imports changed)"
    print(f"| script | {tool}: lines changed | exit | wall s | results files | last line |")
    print("|---|---|---|---|---|---|")
    warm = "kernel_tuner" if a.kernel_tuner else "gpuk.kernel_tuner"
    subprocess.run([sys.executable, "-c", f"import numpy, {warm}\ntry:\n import scipy.sparse\nexcept ImportError:\n pass"],
                   capture_output=True, timeout=120)
    failed = 0
    for n in names:
        r = run(n, a.examples, a.timeout, a.kernel_tuner, a.outputs)
        failed += r["status"] != "0"
        print(f"| {n}.py | {r['changed']} | {r['status']} | {r['wall']:.1f} | {r['results'] or '-'} | "
              f"{r['last'].replace('|', '/')} |", flush=True)
        if r["status"] != "0":
            print(f"  output: {r['dir']}/output.txt", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

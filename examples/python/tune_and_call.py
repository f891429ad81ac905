#!/usr/bin/env python3
"""Tune a kernel file's space, then call the winner: `gpuk.tune` sweeps the small sort's
rank_bucket parameters (configs/tune_sort_small.yaml: every variant verified, timed, ranked),
returns the report as a dict, and the winner is prepared by name (kernel and parameters) and
called on a NumPy array, its answer checked against numpy.sort.

(The winner is also kept in the tuning database, but a call that names no kernel serves n's whole
size bucket [4096, 8191], where a variant tuned at n = 4096 with ITEMS=4 cannot run: the lookup
says so in a warning and asks the next source. Naming the variant runs exactly it.)

    python examples/python/tune_and_call.py [BUDGET]
"""
import sys
import tempfile
from pathlib import Path

import numpy as np
import gpuk

try:
    gpuk.device_info()
except gpuk.NoDeviceError as e:  # one line, and 77 (skipped, as the C++ examples say)
    print(f"tune_and_call.py: skipped: {e}")
    sys.exit(77)

repo = Path(__file__).resolve().parents[2]
budget = int(sys.argv[1]) if len(sys.argv) > 1 else 8
with tempfile.TemporaryDirectory() as tmp:
    db = Path(tmp) / "tuning.json"
    report = gpuk.tune(repo / "configs" / "tune_sort_small.yaml", budget=budget, tuning_db=db, strategy="random",
                       seed=1)
    best = report["best"]
    print(f"tuned {len(report['variants'])} variants; best {best['variant']} at {best['median_ms'] * 1000:.2f} us")

    kernel = best["variant"].split()[0]
    op = gpuk.Engine(tuning_db=db).prepare("sort", "sort", "uint32", 4096, kernel=kernel, params=best["params"])
    print(f"variant {op.variant}\nchosen  {op.chosen}")

    keys = np.random.default_rng(1).integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32)
    ok = np.array_equal(op(keys), np.sort(keys))
    ok = ok and set(op.variant.split()) == set(best["variant"].split())
    print("ok" if ok else "WRONG")
    sys.exit(0 if ok else 1)

#!/usr/bin/env python3
"""Tune a kernel file's space, then call the winner: `gpuk.tune` sweeps the small sort's
rank_bucket parameters (configs/tune_sort_small.yaml: every variant verified, timed, ranked) and
keeps the winner in a tuning database; an Engine reading that database then picks it for
gpuk.sort.keys at that size, and says so.

    python examples/python/tune_and_call.py [BUDGET]
"""
import sys
import tempfile
from pathlib import Path

import numpy as np

import gpuk

repo = Path(__file__).resolve().parents[2]
budget = int(sys.argv[1]) if len(sys.argv) > 1 else 8
with tempfile.TemporaryDirectory() as tmp:
    db = Path(tmp) / "tuning.json"
    report = gpuk.tune(repo / "configs" / "tune_sort_small.yaml", budget=budget, tuning_db=db, strategy="random",
                       seed=1)
    best = report["best"]
    print(f"tuned {len(report['variants'])} variants; best {best['variant']} at {best['median_ms'] * 1000:.2f} us")

    engine = gpuk.Engine(tuning_db=db)
    op = engine.prepare("sort", "sort", "uint32", 4096)
    print(f"variant {op.variant}\nchosen  {op.chosen}")

    keys = np.random.default_rng(1).integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32)
    ok = np.array_equal(gpuk.sort.keys(keys, engine=engine), np.sort(keys))
    ok = ok and op.variant == best["variant"]
    print("ok" if ok else "WRONG")
    sys.exit(0 if ok else 1)

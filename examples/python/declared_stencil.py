#!/usr/bin/env python3
"""A declared kernel from Python (docs/declared.md, docs/python.md "Declared kernels"): the 5-point
stencil of kernels_src/kernel/stencil2d.cu, a kernel written for another tuner, run from its
config on a NumPy grid (nx and ny taken from the grid's shape), checked with Kernel.verify against
a NumPy stencil, and then run as the tuning database picks it (variant auto).

    python examples/python/declared_stencil.py [NY NX]
"""
import sys
from pathlib import Path

import numpy as np
import gpuk

try:
    gpuk.device_info()
except gpuk.NoDeviceError as e:  # one line, and 77 (skipped, as the C++ examples say)
    print(f"declared_stencil.py: skipped: {e}")
    sys.exit(77)


def stencil(grid, c0=0.5, c1=0.125):
    """out = c0 * in + c1 * (the four neighbours), cells outside the grid read as 0."""
    p = np.pad(grid, 1)
    return (c0 * grid + c1 * (p[1:-1, :-2] + p[1:-1, 2:] + p[:-2, 1:-1] + p[2:, 1:-1])).astype(np.float32)


repo = Path(__file__).resolve().parents[2]
ny, nx = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (1023, 2049)
grid = np.random.default_rng(7).uniform(-1, 1, (ny, nx)).astype(np.float32)

k = gpuk.Kernel(repo / "configs" / "kernel_stencil2d.yaml")   # its kernel and parameters
print(k)
print(f"sizes from the grid's shape {grid.shape}: {k.sizes_for(np.empty_like(grid), grid)}")
out = k(np.empty_like(grid), grid)                             # uploaded, run, copied back
print(f"max abs difference from NumPy: {np.abs(out - stencil(grid)).max():.2e}")
k.verify(np.empty_like(grid), grid, reference=stencil)         # gpuk.WrongAnswerError if not
print("verified against the NumPy stencil")

auto = gpuk.Kernel("stencil2d")                                # the tuning database's pick, else the defaults
op = auto.prepare(nx=nx, ny=ny)
print(f"variant auto: {op.variant}\nchosen        {op.chosen}")

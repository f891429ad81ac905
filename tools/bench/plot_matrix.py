#!/usr/bin/env python3
"""gpuk's tuned best against the library baseline, from a tuning matrix's results (docs/tuning.md,
"Tuning matrix and shipped defaults").

  plot_matrix.py RESULTS_DIR [RESULTS_DIR ...] [--out matrix.png] [--no-plot]

RESULTS_DIR is a `gpuk tune MATRIX --out DIR` directory (its cells/*.json). Prints a markdown
table, one row per operation, options and dtype (and input kind, for a matrix of kinds), one column per size: the speed-up of the cell's
winner over the library baseline timed on the same input in the same process (baseline median /
gpuk median, as the issue and docs/PERFORMANCE.md tables give "gpuk / CUB": above 1.00x gpuk is
faster). Then draws the same as a PNG, one panel per operation and options, one line per dtype,
speed-up against size (log2). Only cells whose winner was verified are shown; the others are
listed. The table needs nothing; the PNG needs matplotlib (pip install matplotlib), and is skipped
with a message without it.
"""
import argparse
import glob
import json
import math
import os
import sys


def load(dirs):
    cells = []
    for d in dirs:
        paths = sorted(glob.glob(os.path.join(d, "cells", "*.json")))
        if not paths:
            sys.exit(f"plot_matrix.py: no cell results in {d}/cells (the directory of gpuk tune MATRIX --out DIR)")
        for path in paths:
            with open(path) as f:
                cells.append(json.load(f))
    return cells


def size_text(n):
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def panel_of(c):
    return f"{c['family']} {c['operation']}" + (f" ({c['options']})" if c["options"] else "")


def dtype_of(c):
    """The dtype, with the cell's input kind where its matrix lists kinds: ("uint32 d16")."""
    kind = c["cell"].rsplit(" kind=", 1)
    return c["dtype"] + (f" {kind[1]}" if len(kind) == 2 else "")


def table(cells):
    """The markdown table, and the cells left out (not verified ok, or without a baseline)."""
    sizes = sorted({c["size"] for c in cells})
    rows, left_out = {}, []
    for c in cells:
        if c["status"] != "ok" or not c.get("verified") or not c.get("speedup"):
            left_out.append(f"{c['cell']}: {c['status']}" + (f" ({c['message']})" if c.get("message") else "")
                            + ("" if c["status"] != "ok" else " (no baseline)"))
            continue
        rows.setdefault((panel_of(c), dtype_of(c)), {})[c["size"]] = c
    lines = ["| operation | dtype | " + " | ".join(size_text(s) for s in sizes) + " |",
             "| --- | --- | " + " | ".join("---" for _ in sizes) + " |"]
    for (panel, dtype), by_size in sorted(rows.items()):
        lines.append(f"| {panel} | {dtype} | " +
                     " | ".join(f"{by_size[s]['speedup']:.2f}x" if s in by_size else "" for s in sizes) + " |")
    return "\n".join(lines), rows, left_out


def plot(rows, gpu, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter
    except ImportError as e:
        print(f"plot_matrix.py: no PNG: matplotlib is not installed ({e}); 'pip install matplotlib' to draw it "
              f"(the table above needs nothing)")
        return False
    panels = sorted({p for p, _ in rows})
    columns = min(4, len(panels))
    lines = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4.2 * columns, 3.2 * lines), squeeze=False, sharey=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, panel in zip(axes.flat, panels):
        for (p, dtype), by_size in sorted(rows.items()):
            if p != panel:
                continue
            sizes = sorted(by_size)
            ax.plot([math.log2(s) for s in sizes], [by_size[s]["speedup"] for s in sizes], marker="o", label=dtype)
        ax.axhline(1.0, color="grey", linewidth=1, linestyle="--")
        ax.set_yscale("log")  # ratios: 0.8x and 1.25x stand as far from 1
        for axis_format in (ax.yaxis.set_major_formatter, ax.yaxis.set_minor_formatter):
            axis_format(FuncFormatter(lambda v, _: f"{v:g}x"))
        exponents = sorted({int(math.log2(s)) for (p, _), by_size in rows.items() if p == panel for s in by_size})
        ax.set_xticks(exponents)
        ax.set_xticklabels([f"$2^{{{e}}}$" for e in exponents])
        ax.set_title(panel, fontsize=9)
        ax.set_xlabel("n")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[:, 0]:
        ax.set_ylabel("baseline / gpuk (x)")
    fig.suptitle(f"gpuk's tuned best against the library baseline, same input, same process\n"
                 f"{gpu}; above 1: gpuk is faster", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"plot_matrix.py: wrote {out}")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", help="gpuk tune MATRIX --out DIR directories")
    parser.add_argument("--out", default="matrix.png", help="the PNG (default matrix.png)")
    parser.add_argument("--no-plot", action="store_true", help="the table only")
    args = parser.parse_args()
    cells = load(args.results)
    text, rows, left_out = table(cells)
    gpus = sorted({c.get("gpu", "") for c in cells if c.get("gpu")})
    print(f"gpuk's tuned best against the library baseline (baseline median / gpuk median), {', '.join(gpus)}:\n")
    print(text)
    if left_out:
        print(f"\n{len(left_out)} cells without a verified winner timed against a baseline:")
        for line in left_out:
            print(f"  {line}")
    if not args.no_plot and rows:
        plot(rows, ", ".join(gpus), args.out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Plots of a `gpuk tune` sweep, from its --json or --csv file (docs/tuning.md, "Plots").

  plot_tune.py line RESULTS --x K [--series kernel] [--out time_vs_K.png]
      kernel time against one parameter, one line per kernel file (or per value of --series);
      where other parameters vary too, each point is the fastest over them.
  plot_tune.py heatmap RESULTS --x GRID --y BLOCK [--kernel vecmax_tree] [--out heatmap.png]
      kernel time over two parameters, each cell annotated; variants that did not run are hatched.

Only variants with status "ok" (verified) are plotted. Needs matplotlib (pip install matplotlib).
"""
import argparse
import csv
import json
import math
import os
import sys


def load(path):
    """Rows of {kernel, params, status, median_ms} from a gpuk tune JSON or CSV file."""
    rows = []
    if path.endswith(".json"):
        with open(path) as f:
            doc = json.load(f)
        meta = {k: doc.get(k) for k in ("family", "operation", "dtype", "size")}
        meta["gpu"] = doc.get("device", {}).get("name", "")
        for v in doc["variants"]:
            rows.append({
                "kernel": v["kernel"],
                "params": {k: int(x) for k, x in v["params"].items()},
                "status": v["status"],
                "median_ms": v.get("time", {}).get("median_ms"),
            })
    else:
        meta = {}
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                meta = {"family": r["family"], "operation": r["operation"], "dtype": r["dtype"],
                        "size": r["size"], "gpu": r["gpu"]}
                rows.append({
                    "kernel": r["kernel"],
                    "params": {k[len("param_"):]: int(x) for k, x in r.items() if k.startswith("param_") and x != ""},
                    "status": r["status"],
                    "median_ms": float(r["median_ms"]) if r["median_ms"] else None,
                })
    return meta, rows


def time_unit(values):
    """Scale and label so that the numbers read well."""
    top = max(values) if values else 1
    return (1e3, "µs") if top < 1 else (1, "ms")


def title_of(meta, extra):
    parts = [str(meta.get(k)) for k in ("family", "operation", "dtype") if meta.get(k)]
    size = meta.get("size")
    if size:
        parts.append(f"n = {int(size):,}")
    head = " ".join(parts)
    gpu = meta.get("gpu")
    return f"{head}{' on ' + gpu if gpu else ''}\n{extra}"


def cmd_line(args, plt, meta, rows):
    ok = [r for r in rows if r["status"] == "ok" and args.x in r["params"]]
    if args.kernel:
        ok = [r for r in ok if r["kernel"] == args.kernel]
    if not ok:
        sys.exit(f"plot_tune.py: no verified variant has a parameter {args.x}")
    series = {}
    for r in ok:
        key = r["kernel"] if args.series == "kernel" else f"{args.series}={r['params'].get(args.series)}"
        best = series.setdefault(key, {})
        x = r["params"][args.x]
        if x not in best or r["median_ms"] < best[x]:
            best[x] = r["median_ms"]
    scale, unit = time_unit([t for s in series.values() for t in s.values()])
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
    for key in sorted(series):
        xs = sorted(series[key])
        ax.plot(xs, [series[key][x] * scale for x in xs], marker="o", markersize=3, linewidth=1.5, label=key)
    # Kernel files without the parameter (per_element has no K): a flat reference line.
    flat = {}
    for r in rows:
        if r["status"] == "ok" and args.x not in r["params"] and (not args.kernel or r["kernel"] == args.kernel):
            if r["kernel"] not in flat or r["median_ms"] < flat[r["kernel"]]:
                flat[r["kernel"]] = r["median_ms"]
    for k, t in sorted(flat.items()):
        ax.axhline(t * scale, linestyle="--", linewidth=1, color="grey")
        ax.annotate(f"{k} (no {args.x})", (ax.get_xlim()[0], t * scale), textcoords="offset points", xytext=(4, 3),
                    fontsize=8, color="dimgrey")
    if args.logx:
        ax.set_xscale("log", base=2)
    if args.logy:
        ax.set_yscale("log")
    ax.set_xlabel(args.x)
    ax.set_ylabel(f"kernel time, median ({unit})")
    varying = {k for r in ok for k, v in r["params"].items()
               if k != args.x and any(q["params"].get(k, v) != v for q in ok)}
    other = f"; fastest over {', '.join(sorted(varying))}" if varying else ""
    ax.set_title(args.title or title_of(meta, f"kernel time against {args.x}{other}"), fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out)
    return args.out


def cmd_heatmap(args, plt, meta, rows):
    ok = [r for r in rows if args.x in r["params"] and args.y in r["params"]]
    if args.kernel:
        ok = [r for r in ok if r["kernel"] == args.kernel]
    kernels = sorted({r["kernel"] for r in ok})
    if len(kernels) > 1:
        sys.exit(f"plot_tune.py: {', '.join(kernels)} all have {args.x} and {args.y}; pick one with --kernel")
    xs = sorted({r["params"][args.x] for r in ok})
    ys = sorted({r["params"][args.y] for r in ok})
    if not xs or not ys:
        sys.exit(f"plot_tune.py: no variant has both {args.x} and {args.y}")
    cell = {}
    for r in ok:
        if r["status"] != "ok":
            continue
        key = (r["params"][args.y], r["params"][args.x])
        if key not in cell or r["median_ms"] < cell[key]:
            cell[key] = r["median_ms"]
    if not cell:
        sys.exit("plot_tune.py: no verified variant to plot")
    scale, unit = time_unit(list(cell.values()))
    nan = float("nan")
    grid = [[cell.get((y, x), nan) * scale for x in xs] for y in ys]
    fig, ax = plt.subplots(figsize=(1.0 + 0.75 * len(xs), 1.4 + 0.5 * len(ys)), dpi=100)
    import matplotlib.colors as colors
    finite = [v for row in grid for v in row if not math.isnan(v)]
    norm = colors.LogNorm(vmin=min(finite), vmax=max(finite)) if min(finite) > 0 else None
    image = ax.imshow(grid, cmap="viridis_r", aspect="auto", norm=norm, origin="lower")
    best = min(cell, key=cell.get)
    for i, y in enumerate(ys):
        for j, x in enumerate(xs):
            v = grid[i][j]
            if math.isnan(v):
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="xx", color="lightgrey"))
                continue
            text = f"{v:.3g}"
            weight = "bold" if (y, x) == best else "normal"
            shade = image.norm(v) if norm else 0.5
            ax.text(j, i, text, ha="center", va="center", fontsize=7, weight=weight,
                    color="white" if shade > 0.6 else "black")
    ax.set_xticks(range(len(xs)), [str(x) for x in xs])
    ax.set_yticks(range(len(ys)), [str(y) for y in ys])
    ax.set_xlabel(args.x)
    ax.set_ylabel(args.y)
    name = kernels[0] if kernels else ""
    ax.set_title(args.title or title_of(meta, f"{name}: median kernel time ({unit}); best in bold"), fontsize=9)
    fig.colorbar(image, ax=ax, label=unit)
    fig.tight_layout()
    fig.savefig(args.out)
    return args.out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    line = sub.add_parser("line", help="time against one parameter, a line per kernel file")
    line.add_argument("results", help="gpuk tune --json or --csv file")
    line.add_argument("--x", required=True, help="the parameter on the x axis")
    line.add_argument("--series", default="kernel", help="one line per kernel file (default) or per value of PARAM")
    line.add_argument("--kernel", help="only this kernel file")
    line.add_argument("--logx", action="store_true", help="log2 x axis")
    line.add_argument("--logy", action="store_true", help="log y axis")
    line.add_argument("--title")
    line.add_argument("--out", help="image file (default: RESULTS stem + _X.png)")
    heat = sub.add_parser("heatmap", help="time over two parameters")
    heat.add_argument("results", help="gpuk tune --json or --csv file")
    heat.add_argument("--x", required=True, help="the parameter across")
    heat.add_argument("--y", required=True, help="the parameter down")
    heat.add_argument("--kernel", help="the kernel file, when several have both parameters")
    heat.add_argument("--title")
    heat.add_argument("--out", help="image file (default: RESULTS stem + _Y_x_X.png)")
    args = parser.parse_args()

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        sys.exit(f"plot_tune.py: needs matplotlib, which is not installed ({e}); install it with "
                 f"'pip install matplotlib' (gpuk itself does not need it)")

    meta, rows = load(args.results)
    stem = os.path.splitext(args.results)[0]
    if args.command == "line":
        args.out = args.out or f"{stem}_{args.x}.png"
        out = cmd_line(args, plt, meta, rows)
    else:
        args.out = args.out or f"{stem}_{args.y}_x_{args.x}.png"
        out = cmd_heatmap(args, plt, meta, rows)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

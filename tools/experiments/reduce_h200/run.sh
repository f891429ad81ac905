#!/usr/bin/env bash
# What onepass lacks at the H200's bandwidth: its switches (LOAD, SPLIT, WAVES, FOLD; matrix.yaml
# says what each does) and shapes swept per cell of issue 35's reduce targets, CUB timed on the
# same input in the same process per cell (a tuning matrix: docs/tuning.md). Prints per cell the
# winner against CUB, then per switch value the cell's best median with that value (the other
# parameters free), relative to the cell's best: which switch pays where.
# Usage: tools/experiments/reduce_h200/run.sh BUILD_DIR OUT_DIR [EXTRA gpuk tune ARGS...]
#        (repository root, on the GPU; e.g. --export kernels_src/tuned/sm_90.json to ship the
#        winners as this GPU model's entries)
source "$(dirname "$0")/../../dev/help.sh" "$@"
set -u
build=${1:-build}
out=${2:-out}
shift 2 || true
here=$(dirname "$0")
mkdir -p "$out"
"$build/gpuk" tune "$here/matrix.yaml" --out "$out/matrix" "$@" > "$out/matrix.txt" 2>&1 || echo "matrix: exit $?"
grep -E "cell [0-9]+/" "$out/matrix.txt"
python3 - "$out/matrix" <<'PY'
import json, pathlib, re, sys
root = pathlib.Path(sys.argv[1])
SWITCHES = ("LOAD", "SPLIT", "WAVES", "FOLD", "BLOCKS_PER_SM")
print(f"{'cell':<34}{'best us':>9}{'CUB us':>9}{'ratio':>7}  " + "  ".join(f"{s}" for s in SWITCHES) + "   winner")
for p in sorted((root / "reports").glob("*.json"), key=lambda p: (p.stem.split(".n")[0], int(p.stem.rsplit(".n", 1)[-1]))):
    r = json.loads(p.read_text())
    cell = json.loads((root / "cells" / p.name).read_text()) if (root / "cells" / p.name).exists() else {}
    ok = [v for v in r.get("variants", []) if v.get("status") == "ok"]
    if not ok:
        print(f"{p.stem:<34} no variant ok"); continue
    def params(v):
        return v.get("params") or dict(re.findall(r"(\w+)=(\d+)", v["variant"]))
    best = min(v["time"]["median_ms"] for v in ok)
    cols = []
    for s in SWITCHES:
        by = {}
        for v in ok:
            k = str(params(v).get(s, "?"))
            by[k] = min(by.get(k, 9e9), v["time"]["median_ms"])
        cols.append(" ".join(f"{k}:{by[k] / best:.3f}" for k in sorted(by)))
    b = cell.get("baseline_ms", 0)
    w = cell.get("winner_ms", best)
    print(f"{p.stem:<34}{w * 1e3:>9.2f}{b * 1e3:>9.2f}{(b / w if w else 0):>7.3f}  " + " | ".join(cols) + f"   {cell.get('winner_label', '')}")
PY

#!/usr/bin/env bash
# argminmax of float32 on the default path (no kernel named: gpuk chooses) at 2^12, 2^14, ...,
# 2^28 against CUB's ArgMin then ArgMax (two passes; neither the toolkit's CCCL 3.0 nor the newest
# on PyPI, 3.5, has a one-pass ArgMinMax) in the same run, every answer verified against the CPU
# reference; sum of float32 at 2^28 (one read of the data, the bandwidth argminmax is held to);
# and max and min of float32 at 2^12 against CUB's Max and Min (issue 44's launch-bound cell), on
# the default path and with one_block named (the family's pick for launch-bound sizes, which the
# shipped entries of a tuned GPU override until configs/tune_reduce_small.yaml is exported).
# Prints one table; each run's report is OUT_DIR/NAME.json.
# Usage: tools/bench/bench_argminmax.sh BUILD_DIR [OUT_DIR]
#   SIZES="12 20 28": only those powers of two for argminmax (default 12 14 ... 28)
#   GPUK="gpuk --kernels DIR": the command instead of BUILD_DIR/gpuk
# About 40 s on an H200 (the CPU reference of 2^28 floats is most of it).
source "$(dirname "$0")/../dev/help.sh" "$@"
set -uo pipefail
build=${1:-build}
out=${2:-bench-argminmax}
mkdir -p "$out"
gpuk=${GPUK:-$build/gpuk}
status=0

run() {  # NAME OPERATION EXPONENT [EXTRA-YAML-LINES]
  local f="$out/$1" e=$3
  printf 'family: reduce\noperation: %s\ndtype: float32\nsize: 2^%s\ndata: {generator: uniform, low: -1, high: 1, seed: 1}\n%bwarmup: %s\nrepeats: %s\ncpu_repeats: 1\n' \
    "$2" "$e" "${4:-}" "$([ "$e" -le 24 ] && echo 10 || echo 3)" "$([ "$e" -le 20 ] && echo 200 || echo 30)" > "$f.yaml"
  if ! $gpuk run "$f.yaml" --json "$f.json" > "$f.txt" 2>&1; then
    echo "$1: gpuk run failed ($(tail -1 "$f.txt"))"
    status=1
  fi
}

for e in ${SIZES:-12 14 16 18 20 22 24 26 28}; do run "argminmax-2p$e" argminmax "$e"; done
run sum-2p28 sum 28
for op in max min; do
  run "$op-2p12" $op 12
  run "$op.one_block-2p12" $op 12 "kernel: one_block\n"
done

python3 - "$out" <<'PY' || status=1
import json, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
rows, failed, below = [], 0, 0
for p in sorted(out.glob("*.json"), key=lambda p: (p.stem.split("-")[0], int(p.stem.split("2p")[1]))):
    r = json.loads(p.read_text())
    g = r["kernel"]["median_ms"]
    base = r.get("baseline", {})
    b = base.get("time", {}).get("median_ms")
    ok = r.get("verification", {}).get("passed")
    note = base.get("note", "")
    failed += ok is not True
    below += bool(b) and b / g < 1.0
    rows.append((p.stem, g, b, ok, r.get("gbs", 0), r.get("variant", "?"), base.get("name", "-"), note, r.get("device", {}).get("name", "?")))
gpus = sorted({row[-1] for row in rows})
print(f"== {', '.join(gpus)}")
print(f"{'case':<18}{'gpuk ms':>10}{'CUB ms':>10}{'ratio':>7}{'GB/s':>8}  verify  variant / baseline")
for name, g, b, ok, gbs, variant, bname, note, _ in rows:
    ratio = b / g if b and g else 0
    print(f"{name:<18}{g:>10.4f}{(b or 0):>10.4f}{ratio:>7.2f}{gbs:>8.0f}  {'PASS' if ok else 'FAIL':<6}  {variant[:70]} / {bname}"
          + (f" [{note}]" if note else ""))
one = {name: g for name, g, *_ in rows}
if "argminmax-2p28" in one and "sum-2p28" in one:
    print(f"argminmax at 2^28: {one['argminmax-2p28'] / one['sum-2p28']:.3f}x the time of one read (sum of the same data)"
          " (issue 44's target: within 1.05x)")
print(f"{len(rows)} runs, {below} below 1.0x CUB, {failed} not verified")
sys.exit(1 if failed else 0)
PY
exit $status

#!/usr/bin/env bash
# find_if against CUB's DeviceFind::FindIf (the newest CCCL's, tools/bench/cccl_headers.sh) and
# thrust::find_if (the toolkit's CCCL, timed by gpuk in the same run): the first x >= v in n
# ascending float32, the first match at the start, the middle, the end, or absent, n = 2^12 ...
# 2^28. gpuk runs on the default path (no kernel named); every answer is verified (gpuk's and
# Thrust's against std::find_if, CUB's against the index its data puts the match at). Prints
# one table, and for the absent case at 2^28 gpuk's GB/s as a share of the device's peak and of
# the measured device-to-device copy rate. Then the range (compare: range, lo <= x < 1 with lo the
# middle element, and a range no element is in: the full scan) against thrust::find_if only (CUB
# has no range find; its FindIf with a range predicate is what thrust::find_if runs).
# Usage: tools/bench/bench_find_if.sh BUILD_DIR [OUT_DIR]
#   SIZES="12 20 28": those powers of two (default 12 14 ... 28)
#   NVCC=nvcc: the compiler for the CUB program; CUB=none: leave CUB out (Thrust only)
#   RANGE=0: leave the range cells out
# The CUB program is built here (not by CMake, so a missing CCCL never breaks the build); its
# data (x[i] = float(i)) and gpuk's (uniform in [-1, 1), sorted) put the first match at the
# same positions, so the times compare; the bytes read are n * 4 in the absent case only.
source "$(dirname "$0")/../dev/help.sh" "$@"
set -uo pipefail
build=${1:-build}
out=${2:-bench-find-if}
mkdir -p "$out"
gpuk=${GPUK:-$build/gpuk}
sizes=${SIZES:-12 14 16 18 20 22 24 26 28}

cub="$out/cub_find_if"
if [ "${CUB:-}" != none ]; then
  if include=$(tools/bench/cccl_headers.sh) && "${NVCC:-nvcc}" -std=c++17 -O3 -arch=native -I"$include" \
       tools/bench/cub_find_if.cu -o "$cub"; then
    # shellcheck disable=SC2086
    "$cub" $sizes > "$out/cub.tsv" || echo "cub_find_if failed: CUB left out"
  else
    echo "the CUB program did not build (no CCCL 3.3+ headers?): CUB left out"
  fi
fi

for e in $sizes; do
  for at in first middle last absent; do
    f="$out/find_if-2p$e-$at"
    printf 'family: search\noperation: find_if\ncompare: ge\ndtype: float32\nsize: 2^%s\nvalue_at: %s\ndata: {generator: sorted, low: -1, high: 1, seed: 7}\nwarmup: 10\nrepeats: %s\ncpu_repeats: 1\n' \
      "$e" "$at" "$([ "$e" -le 20 ] && echo 200 || ([ "$e" -le 24 ] && echo 50 || echo 20))" > "$f.yaml"
    "$gpuk" run "$f.yaml" --json "$f.json" > "$f.txt" 2>&1 || echo "find_if 2^$e $at: exit $? ($(tail -1 "$f.txt"))"
  done
  [ "${RANGE:-1}" = 0 ] && continue
  for pick in "middle:value_at: middle\nvalue_hi: 1" "absent:value_at: absent"; do
    f="$out/range-2p$e-${pick%%:*}"
    printf 'family: search\noperation: find_if\ncompare: range\ndtype: float32\nsize: 2^%s\n%b\ndata: {generator: sorted, low: -1, high: 1, seed: 7}\nwarmup: 10\nrepeats: %s\ncpu_repeats: 1\n' \
      "$e" "${pick#*:}" "$([ "$e" -le 20 ] && echo 200 || ([ "$e" -le 24 ] && echo 50 || echo 20))" > "$f.yaml"
    "$gpuk" run "$f.yaml" --json "$f.json" > "$f.txt" 2>&1 || echo "range 2^$e ${pick%%:*}: exit $? ($(tail -1 "$f.txt"))"
  done
done

python3 - "$out" <<'PY'
import csv, json, pathlib, sys
out = pathlib.Path(sys.argv[1])
cub, copy, library, tname = {}, None, "CUB left out", "-"
if (out / "cub.tsv").exists():
    for r in csv.DictReader(open(out / "cub.tsv"), delimiter="\t"):
        if r["library"] == "copy":
            copy = float(r["gbs"])
            continue
        library = r["library"]
        cub[(int(r["n"]), {"start": "first", "end": "last"}.get(r["at"], r["at"]))] = (float(r["median_ms"]), r["verify"])
rows, absent_top = [], None
for p in sorted(out.glob("find_if-2p*.json"), key=lambda p: (int(p.stem.split("-")[1][2:]), p.stem)):
    r = json.loads(p.read_text())
    e, at = int(p.stem.split("-")[1][2:]), p.stem.split("-")[2]
    g = r["kernel"]["median_ms"]
    t = (r.get("baseline") or {}).get("time", {}).get("median_ms")
    tname = (r.get("baseline") or {}).get("name", "-")
    ok = r.get("verification", {}).get("passed")
    tnote = (r.get("baseline") or {}).get("note")
    c = cub.get((1 << e, at))
    rows.append((e, at, r.get("result", {}).get("index", "?"), g, t, c, ok, tnote, r.get("variant", "?")))
    if at == "absent" and e == 28:
        absent_top = r
print(f"find_if x >= v, float32, ascending data; baselines: {library}; {tname}")
print(f"{'n':>6} {'at':<7}{'index':>11}{'gpuk ms':>10}{'CUB ms':>10}{'xCUB':>7}{'Thrust ms':>11}{'xThrust':>8}  verify")
for e, at, index, g, t, c, ok, tnote, variant in rows:
    cms = f"{c[0]:.4f}" if c else "-"
    xc = f"{c[0] / g:.2f}" if c and g else "-"
    xt = f"{t / g:.2f}" if t and g else "-"
    v = ("PASS" if ok else "FAIL") + ("" if c is None else f" CUB {c[1]}") + (f" Thrust: {tnote}" if tnote else "")
    print(f"  2^{e:<3} {at:<7}{index:>11}{g:>10.4f}{cms:>10}{xc:>7}{(t or 0):>11.4f}{xt:>8}  {v}")
if absent_top:
    gbs, pct, peak = absent_top["gbs"], absent_top["percent_of_peak"], absent_top.get("device", {}).get("peak_bandwidth_gbs")
    line = f"absent at 2^28: gpuk {gbs:.0f} GB/s, {pct:.1f}% of the device's peak"
    if copy:
        line += f", {100 * gbs / copy:.1f}% of the measured copy rate ({copy:.0f} GB/s, read + write)"
    print(line + f"; variant {absent_top.get('variant', '?')}")
ranges = sorted(out.glob("range-2p*.json"), key=lambda p: (int(p.stem.split("-")[1][2:]), p.stem))
if ranges:
    print("find_if over a range, lo <= x < hi, float32, ascending data (CUB has no range find)")
    print(f"{'n':>6} {'at':<7}{'index':>11}{'gpuk ms':>10}{'Thrust ms':>11}{'xThrust':>8}  verify")
for p in ranges:
    r = json.loads(p.read_text())
    e, at = int(p.stem.split("-")[1][2:]), p.stem.split("-")[2]
    g = r["kernel"]["median_ms"]
    t = (r.get("baseline") or {}).get("time", {}).get("median_ms")
    tnote = (r.get("baseline") or {}).get("note")
    v = ("PASS" if r.get("verification", {}).get("passed") else "FAIL") + (f" Thrust: {tnote}" if tnote else "")
    xt = f"{t / g:.2f}" if t and g else "-"
    print(f"  2^{e:<3} {at:<7}{r.get('result', {}).get('index', '?'):>11}{g:>10.4f}{(t or 0):>11.4f}{xt:>8}  {v}")
PY

#!/usr/bin/env bash
# What a user gets who names no kernel: for each family, operation and dtype of issue 14 and each
# size 2^10, 2^12, ..., 2^28, a config with no kernel, params or variant (gpuk chooses), run with
# `gpuk run --json`: gpuk's kernel median against the library baseline's (CUB, Thrust) in the same
# run, and whether gpuk's answer matched the CPU reference. One table at the end.
# Usage: tools/bench/bench_defaults.sh BUILD_DIR [OUT_DIR]
#   SIZES="10 16 22": only those powers of two (default 10 12 ... 28)
#   ONLY=REGEX: only the cases whose name matches (names: reduce-argmax-float32, sort-sort-uint32-desc,
#               sort-sort_pairs-float32-asc, search-find-int32, ...)
#   GPUK="gpuk --kernels DIR": the command instead of BUILD_DIR/gpuk
# Data: integers uniform over their whole range (unique int32 for search), floats uniform in
# [-1, 1) (gpuk's default data, which gives float keys few distinct top digits); pairs carry
# uint32 values. Large sizes take fewer repeats. The sort's CPU reference is sequential up to
# 2^26 (about 7 s a run there) and parallel above (the plugin's rule): the whole matrix, 220
# runs, should take 8 to 10 minutes on an H100 (SIZES trims it).
set -uo pipefail
build=${1:-build}
out=${2:-bench-defaults}
mkdir -p "$out"
gpuk=${GPUK:-$build/gpuk}
sizes=${SIZES:-10 12 14 16 18 20 22 24 26 28}
start=$(date +%s)

repeats_for() {  # EXPONENT: timed runs (fewer where one run is long)
  local e=$1
  if [ "$e" -le 20 ]; then echo 100; elif [ "$e" -le 24 ]; then echo 30; else echo 8; fi
}

# case NAME FAMILY OPERATION DTYPE DATA EXTRA-YAML-LINES
case_() {
  local name=$1 family=$2 op=$3 dtype=$4 data=$5 extra=$6 e
  [[ -n "${ONLY:-}" && ! "$name" =~ $ONLY ]] && return 0
  for e in $sizes; do
    local f="$out/$name-2p$e"
    printf 'family: %s\noperation: %s\ndtype: %s\nsize: 2^%s\ndata: %s\n%bwarmup: %s\nrepeats: %s\ncpu_repeats: 1\n' \
      "$family" "$op" "$dtype" "$e" "$data" "$extra" "$([ "$e" -le 24 ] && echo 10 || echo 3)" "$(repeats_for "$e")" > "$f.yaml"
    $gpuk run "$f.yaml" --json "$f.json" > "$f.txt" 2>&1
    local rc=$?
    [ $rc -ne 0 ] && echo "$name 2^$e: exit $rc ($(tail -1 "$f.txt"))"
  done
}

ints='{generator: uniform, low: -1e30, high: 1e30, seed: 1}'  # clamped to each integer type's range
floats='{generator: uniform, low: -1, high: 1, seed: 1}'
for op in argmax argmin max min sum; do case_ "reduce-$op-float32" reduce $op float32 "$floats" ""; done
case_ reduce-argmax-int32 reduce argmax int32 "$ints" ""
case_ search-find-int32 search find int32 '{generator: permutation, seed: 1}' "value_at: random\n"
case_ search-find-float32 search find float32 "$floats" "value_at: random\n"
for order in ascending descending; do
  o=asc; [ $order = descending ] && o=desc
  for dtype in uint32 int32 float32 uint64 float64; do
    data=$ints; [[ $dtype == float* ]] && data=$floats
    case_ "sort-sort-$dtype-$o" sort sort "$dtype" "$data" "order: $order\n"
  done
  for dtype in uint32 float32; do
    data=$ints; [[ $dtype == float* ]] && data=$floats
    case_ "sort-sort_pairs-$dtype-$o" sort sort_pairs "$dtype" "$data" "order: $order\nvalues: uint32\n"
  done
done

python3 - "$out" "$(( $(date +%s) - start ))" <<'PY'
import json, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
rows = []
for p in out.glob("*.json"):
    r = json.loads(p.read_text())
    m = re.match(r"(.*)-2p(\d+)$", p.stem)
    g = r["kernel"]["median_ms"]
    b = r.get("baseline", {}).get("time", {}).get("median_ms")
    v = r.get("verification", {}).get("passed")
    rows.append((m.group(1), int(m.group(2)), r.get("variant", "?"), r.get("variant_source", ""), g, b, v))
rows.sort()
print(f"{'case':<28}{'n':>6}  {'gpuk ms':>10}{'baseline ms':>12}{'ratio':>7}  verify  chosen")
below = 0
for name, e, variant, source, g, b, v in rows:
    ratio = b / g if b and g else 0
    below += ratio < 1.0
    ver = "PASS" if v else ("FAIL" if v is not None else "-")
    src = f" [{source}]" if source else ""
    print(f"{name:<28}{'2^' + str(e):>6}  {g:>10.4f}{(b or 0):>12.4f}{ratio:>7.2f}  {ver:<6}  {variant[:60]}{src[:60]}")
print(f"{len(rows)} runs, {below} below 1.0x the baseline, {sum(1 for r in rows if r[6] is False)} failed "
      f"verification; {sys.argv[2]} s")
PY

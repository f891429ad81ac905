#!/usr/bin/env bash
# gpuk's sort against CUB's DeviceRadixSort of the same key type and order, in the same run,
# every answer verified element by element (issue 23's table): keys of six dtypes, pairs of
# uint32 and float32 keys with uint32 values, argsort of uint32 and float32 keys, ascending and
# descending, at 2^20, 2^22, ..., 2^28. One line per run as it finishes, a table at the end.
# Usage: tools/bench/bench_sort_cub.sh BUILD_DIR [OUT_DIR]
#   KERNEL=onesweep: that kernel file, with the parameters below; unset: the default path (no
#     kernel named: the shipped defaults or the sort family's choice)
#   PARAMS_KEYS32, PARAMS_KEYS64, PARAMS_PAIRS, PARAMS_ARGSORT: that kernel's parameters per case
#     kind (YAML maps, default {})
#   SIZES="28 24": those powers of two, in that order; ONLY=REGEX: only the cases whose name matches
#     (keys-uint32-asc, pairs-float32-desc, argsort-uint32-asc, ...); VERIFY=false: time only
# Data as tools/bench/bench_defaults.sh's: integers uniform over their whole range, floats uniform in
# [-1, 1). Large sizes take fewer repeats; the CPU reference is parallel above 2^26.
set -uo pipefail
build=${1:-build}
out=${2:-bench-sort-cub}
mkdir -p "$out"
gpuk=${GPUK:-$build/gpuk}
sizes=${SIZES:-20 22 24 26 28}
start=$(date +%s)

ints='{generator: uniform, low: -1e30, high: 1e30, seed: 1}'  # clamped to each integer type's range
floats='{generator: uniform, low: -1, high: 1, seed: 1}'

# One line per run as it finishes (a run cut short keeps the lines before it).
row() {  # JSON
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
g = r["kernel"]["median_ms"]; b = r.get("baseline", {}).get("time", {}).get("median_ms") or 0
v = r.get("verification", {}).get("passed")
print(f"{sys.argv[1].rsplit('/', 1)[-1][:-5]:<28}{g:>10.4f}{b:>10.4f}{(b / g if g else 0):>9.3f}  "
      f"{'PASS' if v else ('FAIL' if v is not None else '-'):<6}  {r.get('variant', '?')[:70]}", flush=True)
PY
}

# case NAME OPERATION DTYPE ORDER PARAMS EXPONENT
case_() {
  local name=$1 op=$2 dtype=$3 order=$4 params=$5 e=$6 data=$ints
  [[ -n "${ONLY:-}" && ! "$name" =~ $ONLY ]] && return 0
  [[ $dtype == float* ]] && data=$floats
  local f="$out/$name-2p$e" kernel=""
  [ -n "${KERNEL:-}" ] && kernel="kernel: $KERNEL\nparams: $params\n"
  printf 'family: sort\noperation: %s\ndtype: %s\norder: %s\nvalues: uint32\nsize: 2^%s\ndata: %s\n%bwarmup: %s\nrepeats: %s\ncpu_repeats: 1\nverify: %s\n' \
    "$op" "$dtype" "$order" "$e" "$data" "$kernel" "$([ "$e" -le 24 ] && echo 10 || echo 3)" \
    "$([ "$e" -le 22 ] && echo 50 || { [ "$e" -le 24 ] && echo 20 || echo 10; })" "${VERIFY:-true}" > "$f.yaml"
  if timeout 300 "$gpuk" run "$f.yaml" --json "$f.json" > "$f.txt" 2>&1; then row "$f.json"
  else echo "$name-2p$e: exit $? ($(tail -1 "$f.txt"))"; fi
}

# Sizes outer, so that a run cut short has every case of the sizes it reached.
for e in $sizes; do
  for order in ascending descending; do
    o=asc; [ $order = descending ] && o=desc
    for dtype in uint32 int32 float32; do case_ "keys-$dtype-$o" sort $dtype $order "${PARAMS_KEYS32:-{\}}" $e; done
    for dtype in uint64 int64 float64; do case_ "keys-$dtype-$o" sort $dtype $order "${PARAMS_KEYS64:-{\}}" $e; done
    for dtype in uint32 float32; do case_ "pairs-$dtype-$o" sort_pairs $dtype $order "${PARAMS_PAIRS:-{\}}" $e; done
    for dtype in uint32 float32; do case_ "argsort-$dtype-$o" argsort $dtype $order "${PARAMS_ARGSORT:-{\}}" $e; done
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
    rows.append((m.group(1), int(m.group(2)), r.get("variant", "?"), g, b, v))
rows.sort()
print(f"{'case':<22}{'n':>6}  {'gpuk ms':>10}{'CUB ms':>10}{'CUB/gpuk':>9}  verify  variant")
below = 0
for name, e, variant, g, b, v in rows:
    ratio = b / g if b and g else 0
    below += ratio < 1.0
    ver = "PASS" if v else ("FAIL" if v is not None else "-")
    print(f"{name:<22}{'2^' + str(e):>6}  {g:>10.4f}{(b or 0):>10.4f}{ratio:>9.3f}  {ver:<6}  {variant[:70]}")
print(f"{len(rows)} runs, {below} below CUB, {sys.argv[2]} s")
PY

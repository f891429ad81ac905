#!/usr/bin/env bash
# Float keys: all of a pass's key loads issued before their digits are computed (radix.cu) against
# the load-then-map per item of the commit before (radix_cur, a drop-in), CUB in the same run;
# compute-sanitizer and verified runs on float32 and float64 keys with NaN (docs/PERFORMANCE.md,
# "Sort: float keys and the digit byte"). Nsight Compute had shown float32 pairs' passes 35% longer than
# uint32 pairs' with 5% more instructions, the same occupancy and the same bank conflicts.
# Usage: tools/experiments/packed_and_digit_byte/float_loads.sh BUILD_DIR OUT_DIR OLD_KERNELS_DIR
#   OLD_KERNELS_DIR/sort/radix_cur.cu: git show f687d23:kernels_src/sort/radix.cu
#   CONFIGS_ONLY=1: write the configs and stop
set -u
build=${1:-build}
out=${2:-out}
old=${3:-old}
mkdir -p "$out/san" "$out/ok" "$out/m"
g="$build/gpuk --kernels $old"
cfg() {  # FILE OP DTYPE ORDER KERNEL PARAMS SIZE DATA REPEATS BASELINE
  printf 'family: sort\noperation: %s\ndtype: %s\norder: %s\nvalues: uint32\nkernel: %s\nparams: %s\nsize: %s\ndata: %s\nwarmup: 3\nrepeats: %s\ncpu_repeats: 1\nbaseline: %s\n' \
    "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "${10}" > "$1"
}
unit='{generator: uniform, low: -1, high: 1, seed: 1}'
nan='{generator: uniform, low: -1e30, high: 1e30, seed: 3, nan: {count: 40, at: [7, 4000]}}'
bits='{generator: uniform, low: 0, high: 4294967295, seed: 1}'
pairs='{BLOCK: 256, ITEMS: 23, MIN_BLOCKS: 2, VLOAD: 0, LB32: 1}'
keys='{BLOCK: 256, ITEMS: 16, MIN_BLOCKS: 4, LB32: 1}'
cfg "$out/san/pairs_f32.yaml" sort_pairs float32 ascending radix "{}" 20003 "$nan" 1 false
cfg "$out/san/keys_f64.yaml" sort float64 descending radix "$keys" 20003 "$nan" 1 false
for dtype in float32 float64; do
  for p in "{}" "$pairs" "$keys" "{SMALL: 0, BLOCK: 128, ITEMS: 8, RADIX_BITS: 7}"; do
    tag=$(echo "$p" | tr -dc '0-9A-Z' | cut -c1-24)
    cfg "$out/ok/pairs-$dtype-$tag.yaml" sort_pairs $dtype descending radix "$p" 1048583 "$nan" 2 false
    cfg "$out/ok/keys-$dtype-$tag.yaml" sort $dtype ascending radix "$p" 5003 "$nan" 2 false
  done
done
cfg "$out/m/f32_pairs_tuned.yaml" sort_pairs float32 ascending radix "$pairs" 2^24 "$unit" 20 true
cfg "$out/m/f32_pairs_tuned_cur.yaml" sort_pairs float32 ascending radix_cur "$pairs" 2^24 "$unit" 20 true
cfg "$out/m/f32_pairs_defaults.yaml" sort_pairs float32 ascending radix "{}" 2^24 "$unit" 20 true
cfg "$out/m/f32_pairs_defaults_cur.yaml" sort_pairs float32 ascending radix_cur "{}" 2^24 "$unit" 20 true
cfg "$out/m/f32_keys_tuned.yaml" sort float32 ascending radix "$keys" 2^24 "$unit" 20 true
cfg "$out/m/f32_keys_tuned_cur.yaml" sort float32 ascending radix_cur "$keys" 2^24 "$unit" 20 true
cfg "$out/m/u32_pairs_tuned.yaml" sort_pairs uint32 ascending radix "$pairs" 2^24 "$bits" 20 true
[ "${CONFIGS_ONLY:-0}" = 1 ] && exit 0

results=$out  # sanitize_common.sh sets its own $out
source tools/dev/sanitize_common.sh "$build" "$results/san"
out=$results
TOOLS="memcheck racecheck" sanitize_run "$out/san/pairs_f32.yaml" "$out/san/pairs_f32" pairs_f32
TOOLS=memcheck sanitize_run "$out/san/keys_f64.yaml" "$out/san/keys_f64" keys_f64
fails=0; runs=0
for c in "$out"/ok/*.yaml; do
  runs=$((runs + 1))
  if ! $g run "$c" > "${c%.yaml}.txt" 2>&1 || ! grep -q "verify      PASS" "${c%.yaml}.txt"; then
    fails=$((fails + 1)); echo "FAILED $(basename "$c"): $(grep -E 'verify|differs|error' "${c%.yaml}.txt" | head -2)"
  fi
done
echo "correctness: $runs runs, $fails failed"
for c in "$out"/m/*.yaml; do $g run "$c" --json "${c%.yaml}.json" > "${c%.yaml}.txt" 2>&1 || echo "$(basename "$c"): exit $?"; done
python3 - "$out/m" <<'PY'
import json, pathlib, sys
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    r = json.loads(p.read_text()); g = r["kernel"]["median_ms"]; b = r.get("baseline", {}).get("time", {}).get("median_ms", 0)
    v = r.get("verification", {}).get("passed")
    print(f"{p.stem:<24}{g:>9.4f}{b:>9.4f}{b / g:>7.3f}  {'PASS' if v else 'FAIL'}")
PY

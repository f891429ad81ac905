#!/usr/bin/env bash
# argmax of float32 against CUB at 250,000 (|x|, configs/argmax.yaml) and at each size 2^10 ...
# 2^28 (docs/PERFORMANCE.md, "argmax: packed candidates, the value from the key"). onepass_x.cu is onepass.cu with two
# switches for 32-bit values below 2^32 elements:
#   PACKED 1: every element becomes a packed 64-bit candidate (order key above inverted index) and
#            the whole reduction is an unsigned max: two redux.sync per warp instead of shuffles
#   DECODE 1: the last block takes the value from the winning order key instead of reading in[i]
#            back (one dependent memory round trip less), except for a NaN or a float zero
# Step 1: gpuk tune of onepass_x at 250,000 (no L2 flush: as gpuk run times CUB). Step 2: gpuk run
# (CUB in the same run) of configs/argmax.yaml and of the tune's best. Step 3: per size, gpuk tune
# of onepass_x (PACKED on and off), then gpuk run of each size's best against CUB.
# Usage: tools/experiments/reduce_x/run.sh BUILD_DIR OUT_DIR   (repository root, on the GPU;
#        SIZES="10 12 ...": the powers of two of step 3)
source "$(dirname "$0")/../../dev/help.sh" "$@"
set -u
build=${1:-build}
out=${2:-out}
here=$(dirname "$0")
mkdir -p "$out"
g="$build/gpuk --kernels $here"

tune() {  # NAME SIZE ABS REPEATS PARAMS-YAML
  printf 'family: reduce\noperation: argmax\nabs: %s\ndtype: float32\nsize: %s\ndata: {generator: uniform, low: -1, high: 1, seed: 42}\nkernels: [onepass_x]\nparams:\n%s\nconstraints:\n  - BLOCK * UNROLL * 4 <= n || (BLOCK == 128 && UNROLL == 1)\nflush_l2: false\nwarmup: 5\nrepeats: %s\nrecheck: {top: 5, repeats: %s}\n' \
    "$3" "$2" "$5" "$4" "$(( $4 * 2 ))" > "$out/$1.yaml"
  timeout 120 $g tune "$out/$1.yaml" --no-save --show 12 --json "$out/$1.json" > "$out/$1.txt" 2>&1 || echo "$1: exit $?"
}
run_best() {  # NAME SIZE ABS REPEATS: gpuk run of the tune NAME's best, CUB beside it
  local params
  params=$(python3 -c "import json,sys; b=json.load(open('$out/$1.json'))['best']['params']; print('{' + ', '.join(f'{k}: {v}' for k, v in b.items()) + '}')") || return
  printf 'family: reduce\noperation: argmax\nabs: %s\nkernel: onepass_x\nparams: %s\ndtype: float32\nsize: %s\ndata: {generator: uniform, low: -1, high: 1, seed: 42}\nwarmup: 20\nrepeats: %s\ncpu_repeats: 1\n' \
    "$3" "$params" "$2" "$4" > "$out/run_$1.yaml"
  $g run "$out/run_$1.yaml" --json "$out/run_$1.json" > "$out/run_$1.txt" 2>&1 || echo "run_$1: exit $?"
}
space='  BLOCK: [128, 256, 512, 1024]\n  UNROLL: [1, 2, 4, 8]\n  BLOCKS_PER_SM: [2, 4]\n  DECODE: [1]\n  PACKED: [0, 1]'

# 1-2: 250,000, |x|.
tune t_250k 250000 true 300 "$(printf '  BLOCK: [256, 512, 1024]\n  UNROLL: [1, 2]\n  BLOCKS_PER_SM: [2, 4]\n  PACKED: [0, 1]\n  DECODE: [0, 1]')"
$g run configs/argmax.yaml --json "$out/run_argmax_yaml.json" > "$out/run_argmax_yaml.txt" 2>&1
sed 's/^kernel: .*/kernel: onepass_x/; s/^params: .*/params: {BLOCK: 512, UNROLL: 1, PACKED: 1, DECODE: 1}/' configs/argmax.yaml > "$out/run_argmax_packed.yaml"
$g run "$out/run_argmax_packed.yaml" --json "$out/run_argmax_packed.json" > "$out/run_argmax_packed.txt" 2>&1
run_best t_250k 250000 true 1000

# 3: per size, argmax of float32 (no abs).
for e in ${SIZES:-10 12 14 16 18 20 22 24 26 28}; do
  reps=$(( e >= 26 ? 20 : (e >= 22 ? 100 : 300) ))
  tune t_2p$e 2^$e false $reps "$(printf "$space")"
  run_best t_2p$e 2^$e false $(( reps * 2 ))
done

python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
print(f"{'run':<22}{'n':>11}{'gpuk us':>10}{'CUB us':>10}{'ratio':>7}  verify  variant")
for p in sorted(out.glob("run_*.json"), key=lambda p: (json.loads(p.read_text())["size"], p.stem)):
    r = json.loads(p.read_text()); g = r["kernel"]["median_ms"] * 1e3; b = r.get("baseline", {}).get("time", {}).get("median_ms", 0) * 1e3
    v = r.get("verification", {}).get("passed")
    print(f"{p.stem:<22}{r['size']:>11}{g:>10.2f}{b:>10.2f}{b / g:>7.3f}  {'PASS' if v else 'FAIL'}    {r['variant'][:80]}")
for p in sorted(out.glob("t_*.json")):
    r = json.loads(p.read_text())
    vs = sorted([v for v in r["variants"] if v["status"] == "ok"], key=lambda v: v["time"]["median_ms"])
    print(f"== {p.stem}: " + " | ".join(f"{v['time']['median_ms'] * 1e3:.2f} {v['variant'][10:]}" for v in vs[:6]))
    bad = [v for v in r["variants"] if v["status"] != "ok"]
    if bad: print(f"   not ok: {len(bad)}: {bad[0]['status']} {bad[0]['variant']} {bad[0].get('why', '')}")
PY

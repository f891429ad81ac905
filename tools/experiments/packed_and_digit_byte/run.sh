#!/usr/bin/env bash
# Before and after two kernel changes of 2026-11-24, in one device call (docs/PERFORMANCE.md,
# "Sort: float keys and the digit byte", "argmax: packed candidates, the value from the key"):
#   radix.cu    pairs of 4-byte keys and values keep each element's digit as a byte in the free half
#               of the exchange buffer (no destination registers, no float key map in the scatter);
#               the scan reads the per-warp counts again instead of holding them in registers
#   onepass.cu  max/min/argmax/argmin of 32-bit values reduce packed 64-bit candidates (redux.sync,
#               one atomicMax per block) and decode the value from the winning key
# 1. compute-sanitizer memcheck and racecheck on both; 2. gpuk runs verified against the CPU
# reference on the paths they touch (ties, NaN, all zeros, partial tiles, one block); 3. gpuk run
# with CUB in the same run: before (the files as they were, as drop-ins radix_old, onepass_old) and
# after, at the issue's sizes.
# Usage: tools/experiments/packed_and_digit_byte/run.sh BUILD_DIR OUT_DIR OLD_KERNELS_DIR
#   OLD_KERNELS_DIR holds sort/radix_old.cu and reduce/onepass_old.cu, made with
#   git show 2dd9e78:kernels_src/sort/radix.cu, git show 2dd9e78:kernels_src/reduce/onepass.cu
#   CONFIGS_ONLY=1: write the configs and stop (to fill a compile cache: gpuk check OUT/*/*.yaml)
set -u
build=${1:-build}
out=${2:-out}
old=${3:-old}
mkdir -p "$out/san" "$out/ok" "$out/m"
g="$build/gpuk --kernels $old"

sort_cfg() {  # FILE OP DTYPE ORDER VALUES KERNEL PARAMS SIZE DATA WARMUP REPEATS BASELINE
  printf 'family: sort\noperation: %s\ndtype: %s\norder: %s\nvalues: %s\nkernel: %s\nparams: %s\nsize: %s\ndata: %s\nwarmup: %s\nrepeats: %s\ncpu_repeats: 1\nbaseline: %s\n' \
    "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "${10}" "${11}" "${12}" > "$1"
}
reduce_cfg() {  # FILE OP DTYPE ABS KERNEL PARAMS SIZE DATA WARMUP REPEATS BASELINE
  printf 'family: reduce\noperation: %s\ndtype: %s\nabs: %s\nkernel: %s\nparams: %s\nsize: %s\ndata: %s\nwarmup: %s\nrepeats: %s\ncpu_repeats: 1\nbaseline: %s\n' \
    "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "${10}" "${11}" > "$1"
}
ties='{generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 5}'
unit='{generator: uniform, low: -1, high: 1, seed: 1}'
unitnan='{generator: uniform, low: -1, high: 1, seed: 3, nan: {count: 5, at: [7, 4000]}}'
unitnan_small='{generator: uniform, low: -1, high: 1, seed: 3, nan: {count: 2, at: [7, 400]}}'
bits='{generator: uniform, low: 0, high: 4294967295, seed: 1}'
pairs='{BLOCK: 256, ITEMS: 23, MIN_BLOCKS: 2, VLOAD: 0, LB32: 1}'
keys='{BLOCK: 256, ITEMS: 16, MIN_BLOCKS: 4, LB32: 1}'

# 1. Sanitizers (small sizes: several tiles and a partial one).
sort_cfg "$out/san/pairs_f32.yaml" sort_pairs float32 ascending uint32 radix "{}" 20003 "$ties" 0 1 false
sort_cfg "$out/san/argsort_u32.yaml" argsort uint32 descending uint32 radix "$pairs" 20003 "$ties" 0 1 false
sort_cfg "$out/san/keys_u32.yaml" sort uint32 ascending uint32 radix "$keys" 20003 "$ties" 0 1 false
reduce_cfg "$out/san/argmax_f32.yaml" argmax float32 true onepass "{BLOCK: 512, UNROLL: 1}" 100003 "$unitnan" 0 1 false
reduce_cfg "$out/san/argmin_i32_1block.yaml" argmin int32 false onepass "{}" 1000 "$ties" 0 1 false

# 2. Correctness on the changed paths.
for dtype in uint32 int32 float32; do
  data=$ties; [ $dtype = float32 ] && data=$unitnan
  for p in "{}" "$pairs" "{BLOCK: 384, ITEMS: 23, LB32: 1}" "{SMALL: 0, BLOCK: 128, ITEMS: 8, RADIX_BITS: 7}"; do
    tag=$(echo "$p" | tr -dc '0-9A-Z' | cut -c1-24)
    sort_cfg "$out/ok/pairs-$dtype-$tag.yaml" sort_pairs $dtype ascending uint32 radix "$p" 1048583 "$data" 1 2 false
    sort_cfg "$out/ok/argsort-$dtype-$tag.yaml" argsort $dtype descending uint32 radix "$p" 5003 "$data" 1 2 false
  done
  sort_cfg "$out/ok/pairs64-$dtype.yaml" sort_pairs $dtype descending uint64 radix "{}" 1048583 "$data" 1 2 false
  sort_cfg "$out/ok/keys-$dtype.yaml" sort $dtype ascending uint32 radix "$keys" 1048583 "$data" 1 2 false
done
for op in argmax argmin max; do
  for dtype in float32 int32 uint32; do
    data=$ties; [ $dtype = float32 ] && data=$unitnan
    for abs in false true; do
      reduce_cfg "$out/ok/$op-$dtype-$abs-big.yaml" $op $dtype $abs onepass "{}" 1048583 "$data" 1 2 false
      small=$data; [ $dtype = float32 ] && small=$unitnan_small
      reduce_cfg "$out/ok/$op-$dtype-$abs-1block.yaml" $op $dtype $abs onepass "{BLOCK: 1024, UNROLL: 1, BLOCKS_PER_SM: 2}" 1000 "$small" 1 2 false
    done
  done
done
reduce_cfg "$out/ok/argmax-zeros.yaml" argmax float32 false onepass "{}" 100003 '{generator: few_distinct, distinct: 1, low: 0, high: 0, seed: 1}' 1 2 false
reduce_cfg "$out/ok/argmin-ties-2block.yaml" argmin int32 false onepass "{BLOCK: 128, UNROLL: 1}" 1000 '{generator: few_distinct, distinct: 2, low: 0, high: 1, seed: 9}' 1 2 false

# 3. Measurements, CUB in the same run (before: radix_old / onepass_old).
m_sort() {  # NAME OP DTYPE KERNEL PARAMS SIZE DATA REPEATS
  sort_cfg "$out/m/$1.yaml" "$2" "$3" ascending uint32 "$4" "$5" "$6" "$7" 5 "$8" true
}
m_sort s24_f32_pairs_unit_defaults_old sort_pairs float32 radix_old "{}" 2^24 "$unit" 30
m_sort s24_f32_pairs_unit_defaults sort_pairs float32 radix "{}" 2^24 "$unit" 30
m_sort s24_u32_pairs_defaults_old sort_pairs uint32 radix_old "{}" 2^24 "$bits" 30
m_sort s24_u32_pairs_defaults sort_pairs uint32 radix "{}" 2^24 "$bits" 30
m_sort s24_f32_pairs_unit_tuned_old sort_pairs float32 radix_old "$pairs" 2^24 "$unit" 30
m_sort s24_f32_pairs_unit_tuned sort_pairs float32 radix "$pairs" 2^24 "$unit" 30
m_sort s24_f32_pairs_bits_tuned sort_pairs float32 radix "$pairs" 2^24 '{file: ../f32bits_2p24.npy}' 30
m_sort s24_u32_pairs_tuned sort_pairs uint32 radix "$pairs" 2^24 "$bits" 30
m_sort s24_f32_pairs_unit_384x23 sort_pairs float32 radix "{BLOCK: 384, ITEMS: 23, LB32: 1}" 2^24 "$unit" 30
m_sort s24_u32_keys_tuned sort uint32 radix "$keys" 2^24 "$bits" 30
m_sort s24_f32_keys_unit_tuned sort float32 radix "$keys" 2^24 "$unit" 30
m_sort s24_f32_keys_bits_tuned sort float32 radix "$keys" 2^24 '{file: ../f32bits_2p24.npy}' 30
m_sort s26_u32_pairs_tuned sort_pairs uint32 radix "$pairs" 2^26 "$bits" 20
m_sort s26_u32_pairs_384x23 sort_pairs uint32 radix "{BLOCK: 384, ITEMS: 23, LB32: 1}" 2^26 "$bits" 20
m_sort s28_u32_keys_tuned sort uint32 radix "$keys" 2^28 "$bits" 10
m_red() {  # NAME KERNEL PARAMS SIZE ABS REPEATS
  reduce_cfg "$out/m/$1.yaml" argmax float32 "$5" "$2" "$3" "$4" '{generator: uniform, low: -1, high: 1, seed: 42}' 20 "$6" true
}
m_red a250k_old onepass_old "{BLOCK: 512, UNROLL: 1}" 250000 true 2000
m_red a250k onepass "{BLOCK: 512, UNROLL: 1}" 250000 true 2000
m_red a250k_256x2 onepass "{BLOCK: 256, UNROLL: 2}" 250000 true 2000
m_red a2p10 onepass "{BLOCK: 256, UNROLL: 1}" 2^10 false 2000
m_red a2p22_old onepass_old "{BLOCK: 512, UNROLL: 8, BLOCKS_PER_SM: 4}" 2^22 false 500
m_red a2p22 onepass "{BLOCK: 512, UNROLL: 8, BLOCKS_PER_SM: 4}" 2^22 false 500
m_red a2p28 onepass "{BLOCK: 512, UNROLL: 8, BLOCKS_PER_SM: 4}" 2^28 false 50
[ "${CONFIGS_ONLY:-0}" = 1 ] && exit 0

python3 -c "import numpy as np; np.save('$out/f32bits_2p24.npy', np.random.default_rng(1).integers(0, 2**32, 2**24, dtype=np.uint32).view(np.float32))"
results=$out  # sanitize_common.sh sets its own $out
source tools/dev/sanitize_common.sh "$build" "$results/san"
out=$results
for c in "$out"/san/*.yaml; do
  n=$(basename "$c" .yaml)
  TOOLS=memcheck sanitize_run "$c" "$out/san/$n" "$n"
  case $n in pairs_f32|argmax_f32) TOOLS=racecheck sanitize_run "$c" "$out/san/$n" "$n" ;; esac
done
fails=0; runs=0
for c in "$out"/ok/*.yaml; do
  runs=$((runs + 1))
  if ! $g run "$c" > "${c%.yaml}.txt" 2>&1 || ! grep -q "verify      PASS" "${c%.yaml}.txt"; then
    fails=$((fails + 1)); echo "FAILED $(basename "$c"): $(grep -E 'verify|differs|error' "${c%.yaml}.txt" | head -2)"
  fi
done
echo "correctness: $runs runs, $fails failed"
for c in "$out"/m/*.yaml; do $g run "$c" --json "${c%.yaml}.json" > "${c%.yaml}.txt" 2>&1 || echo "$(basename "$c"): exit $?"; done
rm -f "$out/f32bits_2p24.npy"
python3 - "$out/m" <<'PY'
import json, pathlib, sys
print(f"{'run':<34}{'n':>10}{'gpuk ms':>10}{'CUB ms':>10}{'ratio':>7}  verify  variant")
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    r = json.loads(p.read_text()); g = r["kernel"]["median_ms"]; b = r.get("baseline", {}).get("time", {}).get("median_ms", 0)
    v = r.get("verification", {}).get("passed")
    print(f"{p.stem:<34}{r['size']:>10}{g:>10.4f}{b:>10.4f}{b / g:>7.3f}  {'PASS' if v else 'FAIL'}    {r['variant'][:60]}")
PY

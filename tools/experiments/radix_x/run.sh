#!/usr/bin/env bash
# Why float32 pairs sort slower than uint32 pairs, and which of radix_x's switches pay
# (docs/PERFORMANCE.md, "Sort: float keys and the digit byte"). radix_x.cu is radix.cu with switches:
#   RANK    0: per-warp digit counts by shared atomics first (CUB's early counts), then the ranks;
#           1: the ranks within each warp first (one atomic per group of equal digits), the counts after
#   HPARTS  the histogram launch's shared counters split in parts by lane (CUB's NUM_PARTS)
#   LDCS    1: streaming (evict-first) loads of keys and values
#   MATCH   1: __match_any_sync instead of one ballot per digit bit
#   FDIGIT  1: each key's digit kept as a byte beside the exchanged keys: the scatter reads it
#           instead of mapping the key again, and the values' destinations are not held in registers
# Part A: gpuk run (CUB in the same run) of the committed radix.cu, uint32 against float32 keys,
# keys against pairs, the default float data (uniform in [-1, 1)) against uniformly random bits, at
# 2^24; and the tuned keys at 2^28 and pairs at 2^26.
# Part B: per-kernel device times (Nsight Compute) of gpuk's launches and CUB's on two of them.
# Part C: gpuk tune sweeps of radix_x (every variant verified).
# Usage: tools/experiments/radix_x/run.sh BUILD_DIR OUT_DIR   (repository root, on the GPU;
#        PARTS=AB: only those parts)
source "$(dirname "$0")/../../dev/help.sh" "$@"
set -u
build=${1:-build}
out=${2:-out}
parts=${PARTS:-ABC}
here=$(dirname "$0")
mkdir -p "$out"
g="$build/gpuk --kernels $here"
python3 -c "import numpy as np; np.save('$out/f32bits_2p24.npy', np.random.default_rng(1).integers(0, 2**32, 2**24, dtype=np.uint32).view(np.float32))"

cfg() {  # NAME OPERATION DTYPE DATA PARAMS [SIZE]: a run config (default 2^24)
  printf 'family: sort\noperation: %s\nvalues: uint32\nkernel: radix\nparams: %s\ndtype: %s\nsize: %s\ndata: %s\nwarmup: 5\nrepeats: 20\ncpu_repeats: 1\n' \
    "$2" "$5" "$3" "${6:-2^24}" "$4" > "$out/$1.yaml"
}
bits='{generator: uniform, low: 0, high: 4294967295, seed: 1}'
unit='{generator: uniform, low: -1, high: 1, seed: 1}'
fbits='{file: f32bits_2p24.npy}'
keys='{BLOCK: 256, ITEMS: 16, MIN_BLOCKS: 4, LB32: 1}'
pairs='{BLOCK: 256, ITEMS: 23, MIN_BLOCKS: 2, VLOAD: 0, LB32: 1}'
cfg a_u32_keys sort uint32 "$bits" "$keys"
cfg a_f32_keys_unit sort float32 "$unit" "$keys"
cfg a_f32_keys_bits sort float32 "$fbits" "$keys"
cfg a_u32_pairs sort_pairs uint32 "$bits" "$pairs"
cfg a_f32_pairs_unit sort_pairs float32 "$unit" "$pairs"
cfg a_f32_pairs_bits sort_pairs float32 "$fbits" "$pairs"
cfg a_u32_pairs_defaults sort_pairs uint32 "$bits" "{}"
cfg a_f32_pairs_unit_defaults sort_pairs float32 "$unit" "{}"
# The issue's large-size targets, CUB beside the committed tuned parameters (the sweeps below are
# compared with these).
cfg a_u32_keys_2p28 sort uint32 "$bits" "$keys" 2^28
cfg a_u32_pairs_2p26 sort_pairs uint32 "$bits" "$pairs" 2^26
if [[ $parts == *A* ]]; then
  for c in "$out"/a_*.yaml; do
    n=$(basename "$c" .yaml)
    $g run "$c" --json "$out/$n.json" > "$out/$n.txt" 2>&1 || echo "$n: exit $?"
  done
fi

if [[ $parts == *B* ]] && command -v ncu > /dev/null; then
  for n in a_f32_pairs_unit a_f32_pairs_bits; do
    sed 's/^warmup: .*/warmup: 0/; s/^repeats: .*/repeats: 1/' "$out/$n.yaml" > "$out/ncu_$n.yaml"
    GPUK_NO_GATE=1 timeout 120 ncu --csv -k regex:"radix|Onesweep|Histogram|ExclusiveSum" \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
      $g run "$out/ncu_$n.yaml" > "$out/ncu_$n.csv" 2> "$out/ncu_$n.err" || echo "ncu $n: exit $?"
  done
fi

tune() {  # NAME OPERATION DTYPE SIZE DATA PARAMS-YAML [CONSTRAINTS-YAML]
  printf 'family: sort\noperation: %s\nvalues: uint32\ndtype: %s\nsize: %s\ndata: %s\nkernels: [radix_x]\nparams:\n%s\n%s\nwarmup: 2\nrepeats: %s\nrecheck: {top: 4, repeats: %s}\n' \
    "$2" "$3" "$4" "$5" "$6" "${7:-}" "${REPEATS:-10}" "$(( ${REPEATS:-10} * 2 ))" > "$out/$1.yaml"
  timeout 240 $g tune "$out/$1.yaml" --no-save --show 40 --json "$out/$1.json" > "$out/$1.txt" 2>&1 || echo "$1: exit $?"
}
fixed='  RADIX_BITS: [8]\n  SMALL: [1]\n  LB32: [1]\n  MATCH: [0]'
if [[ $parts == *C* ]]; then
  # The default float data: which switch removes the float penalty (2^24 pairs, 32 variants).
  REPEATS=20 tune c_f32_pairs_unit sort_pairs float32 2^24 "$unit" "$(printf "$fixed"'\n  BLOCK: [256, 384]\n  ITEMS: [23]\n  MIN_BLOCKS: [2]\n  VLOAD: [0, 1]\n  RANK: [0, 1]\n  HPARTS: [1, 4]\n  LDCS: [0]\n  FDIGIT: [0, 1]')"
  # uint32 keys at 2^24: the ranking switches and streaming loads (8 variants).
  REPEATS=20 tune c_u32_keys_2p24 sort uint32 2^24 "$bits" "$(printf '  RADIX_BITS: [8]\n  SMALL: [1]\n  LB32: [1]\n  BLOCK: [256]\n  ITEMS: [16]\n  MIN_BLOCKS: [4]\n  VLOAD: [1]\n  HPARTS: [1]\n  FDIGIT: [0]\n  RANK: [0, 1]\n  MATCH: [0, 1]\n  LDCS: [0, 1]')"
  # uint32 pairs at 2^26 (the issue's 1.0x target): tiles that FDIGIT's fewer registers allow.
  REPEATS=8 tune c_u32_pairs_2p26 sort_pairs uint32 2^26 "$bits" "$(printf "$fixed"'\n  BLOCK: [256, 384]\n  ITEMS: [23]\n  MIN_BLOCKS: [2, 3]\n  VLOAD: [0, 1]\n  RANK: [0]\n  HPARTS: [1]\n  LDCS: [0, 1]\n  FDIGIT: [0, 1]')" \
    "$(printf 'constraints:\n  - FDIGIT == 1 || LDCS == 0\n  - BLOCK == 256 || MIN_BLOCKS == 2')"
  # uint32 keys at 2^28 (the issue's 1.1x target).
  REPEATS=6 tune c_u32_keys_2p28 sort uint32 2^28 "$bits" "$(printf '  RADIX_BITS: [8]\n  SMALL: [1]\n  LB32: [1]\n  BLOCK: [256]\n  ITEMS: [16, 20]\n  MIN_BLOCKS: [3, 4]\n  VLOAD: [1]\n  HPARTS: [1]\n  FDIGIT: [0]\n  MATCH: [0]\n  RANK: [0, 1]\n  LDCS: [0, 1]')"
fi

rm -f "$out/f32bits_2p24.npy"  # 64 MiB: more than a device call brings back
python3 - "$out" <<'PY'
import json, pathlib, sys, csv, io
out = pathlib.Path(sys.argv[1])
print(f"{'run':<28}{'gpuk ms':>9}{'CUB ms':>9}{'ratio':>7}  verify  variant")
for p in sorted(out.glob("a_*.json")):
    r = json.loads(p.read_text()); g = r["kernel"]["median_ms"]; b = r.get("baseline", {}).get("time", {}).get("median_ms", 0)
    v = r.get("verification", {}).get("passed")
    print(f"{p.stem:<28}{g:>9.4f}{b:>9.4f}{b / g:>7.3f}  {'PASS' if v else 'FAIL'}    {r['variant'][:70]}")
for p in sorted(out.glob("ncu_*.csv")):
    rows = [l for l in p.read_text().splitlines() if l.startswith('"')]
    if not rows: continue
    rd = list(csv.DictReader(io.StringIO("\n".join(rows))))
    print(f"== {p.stem}: per launch (first 14)")
    seen = {}
    for x in rd:
        key = (x["ID"], x["Kernel Name"][:40])
        seen.setdefault(key, {})[x["Metric Name"]] = x["Metric Value"]
    for (i, k), m in list(seen.items())[:14]:
        print(f"  {i:>3} {k:<40} " + "  ".join(f"{n.split('__')[1][:22]}={v}" for n, v in m.items()))
for p in sorted(out.glob("c_*.json")):
    r = json.loads(p.read_text())
    print(f"== {p.stem} (best {r.get('best', {}).get('variant', '-')})")
    vs = sorted([v for v in r["variants"] if v["status"] == "ok"], key=lambda v: v["time"]["median_ms"])
    for v in vs:
        print(f"  {v['time']['median_ms']:>9.4f} ms  regs {v.get('registers', '?'):>3} spill {v.get('spill_bytes', '?'):>4}  {v['variant'][7:]}")
    for v in r["variants"]:
        if v["status"] != "ok": print(f"  {v['status']}: {v['variant']} {v.get('why', '')}")
PY

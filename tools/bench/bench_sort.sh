#!/usr/bin/env bash
# The sort benchmark of docs/PERFORMANCE.md: gpuk's sorts against CUB's DeviceRadixSort (and the
# CPU) in the same run, every result verified element by element against the
# stable CPU sort (a parallel LSD radix sort, bit for bit what std::stable_sort gives).
# Usage: tools/bench/bench_sort.sh BUILD_DIR [OUT_DIR]
#   QUICK=1: skip the O(n^2) rank-sort sweep; SWEEP=1: also time other parameter sets (unverified);
#   ONLY=REGEX: only the cases (and configs) whose name matches, e.g. ONLY='bucket|sort_small'
set -euo pipefail
build=${1:-build}
out=${2:-.}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# case NAME KERNEL OPERATION DTYPE SIZE PARAMS REPEATS
case_() {
  local name=$1 kernel=$2 op=$3 dtype=$4 size=$5 params=$6 repeats=$7
  [[ -n "${ONLY:-}" && ! "$name" =~ $ONLY ]] && return 0
  cat > "$tmp/$name.yaml" <<YAML
family: sort
operation: $op
kernel: $kernel
params: $params
dtype: $dtype
size: $size
data: {generator: uniform, low: 0, high: 4294967295, seed: 1}
warmup: 10
repeats: $repeats
cpu_repeats: 1
verify: ${VERIFY:-true}
YAML
  echo "== $name"
  "$build/gpuk" run "$tmp/$name.yaml" --json "$out/$name.json" | tee "$out/$name.txt" |
    grep -E "kernel:|baseline:|speed-up .*cub|verify|differs" || true
}

# The issue's targets: uint32 keys at 2^28, 2^20, 2^12 and uint32 pairs at 2^26.
case_ keys_2p28 radix sort uint32 268435456 "{BLOCK: 256, ITEMS: 16, MIN_BLOCKS: 4, LB32: 1}" 20
case_ keys_2p28_lb64 radix sort uint32 268435456 "{BLOCK: 256, ITEMS: 16, MIN_BLOCKS: 4}" 20
case_ keys_2p28_default radix sort uint32 268435456 "{}" 20
case_ keys_2p20 radix sort uint32 1048576 "{BLOCK: 256, ITEMS: 16, MIN_BLOCKS: 4, LB32: 1}" 100
case_ keys_2p20_default radix sort uint32 1048576 "{}" 100
case_ keys_2p12 radix sort uint32 4096 "{}" 200
case_ keys_2p12_block radix_block sort uint32 4096 "{}" 200
case_ keys_2p12_split rank_split sort uint32 4096 "{}" 500
case_ keys_2p12_bucket rank_bucket sort uint32 4096 "{ITEMS: 4}" 500
case_ keys_8192_bucket rank_bucket sort uint32 8192 "{}" 500
case_ keys_16384_bucket rank_bucket sort uint32 16384 "{ITEMS: 16}" 500
case_ pairs_2p26 radix sort_pairs uint32 67108864 "{BLOCK: 256, ITEMS: 23, MIN_BLOCKS: 2, VLOAD: 0, LB32: 1}" 50
case_ pairs_2p26_default radix sort_pairs uint32 67108864 "{}" 50
for config in configs/sort.yaml configs/sort_pairs.yaml configs/sort_small.yaml configs/ranksort.yaml; do
  name=$(basename "$config" .yaml)
  [[ -n "${ONLY:-}" && ! "$name" =~ $ONLY ]] && continue
  echo "== $config"
  "$build/gpuk" run "$config" --json "$out/$name.json" | tee "$out/$name.txt" |
    grep -E "kernel:|baseline:|speed-up .*cub|verify|differs" || true
done

# Where the O(n^2) rank sort stops paying: the rank sorts against the one-block radix sort and
# the Onesweep radix sort on the same sizes.
if [ "${QUICK:-0}" != 1 ]; then
  for n in 256 1024 4096 12288 65536; do
    case_ rank_global_$n rank_global sort uint32 $n "{}" 20
    [ $n -le 12288 ] && case_ rank_shared_$n rank_shared sort uint32 $n "{}" 20
    case_ rank_split_$n rank_split sort uint32 $n "{}" 20
    [ $n -le 16384 ] && case_ rank_bucket_$n rank_bucket sort uint32 $n "{ITEMS: $([ $n -le 8192 ] && echo 8 || echo 16)}" 20
    [ $n -le 4096 ] && case_ radix_block_$n radix_block sort uint32 $n "{}" 20
    case_ radix_$n radix sort uint32 $n "{SMALL: 0}" 20
  done
fi

# Other parameter sets, timed without the CPU check (exploration, not for the docs).
if [ "${SWEEP:-0}" = 1 ]; then
  i=0
  for p in "{BLOCK: 512, ITEMS: 8, RADIX_BITS: 7}" "{BLOCK: 1024, ITEMS: 4, RADIX_BITS: 6}" \
           "{BLOCK: 1024, ITEMS: 4, RADIX_BITS: 5}" "{BLOCK: 512, ITEMS: 8, RADIX_BITS: 6}" \
           "{BLOCK: 256, ITEMS: 16, RADIX_BITS: 6}"; do
    i=$((i + 1)); VERIFY=false case_ sweep_block_$i radix_block sort uint32 4096 "$p" 200
  done
  i=0
  for p in "{}" "{ITEMS: 12}" "{ITEMS: 8}" "{BLOCK: 512, ITEMS: 6}" "{BLOCK: 384, ITEMS: 8}" "{BLOCK: 128, ITEMS: 16}"; do
    i=$((i + 1))
    VERIFY=false case_ sweep_2p26_$i radix sort uint32 67108864 "$p" 20
    VERIFY=false case_ sweep_2p20_$i radix sort uint32 1048576 "$p" 100
  done
fi

# One line per run: gpuk and CUB medians, keys per second.
if command -v python3 > /dev/null; then
  python3 - "$out" <<'PY'
import json, pathlib, sys
print(f"{'run':<22}{'n':>11}  {'variant':<44}{'gpuk ms':>10}{'CUB ms':>10}{'gpuk/CUB':>9}{'GKeys/s':>9}  verify")
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    r = json.loads(p.read_text())
    g = r["kernel"]["median_ms"]; b = r.get("baseline", {}).get("time", {}).get("median_ms", 0)
    print(f"{p.stem:<22}{r['size']:>11}  {r['variant'][:43]:<44}{g:>10.4f}{b:>10.4f}{(b / g if g else 0):>9.2f}"
          f"{r['size'] / g / 1e6:>9.2f}  {('PASS' if r['verification']['passed'] else 'FAIL') if 'verification' in r else '-'}")
PY
fi

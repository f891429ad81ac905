#!/usr/bin/env bash
# What a user gets who names no kernel: for each family, operation and dtype of issue 14 (and
# issue 35's argsort and int64 keys) and each size 2^10, 2^12, ..., 2^28, a config with no kernel,
# params or variant (gpuk chooses), run with `gpuk run --json`: gpuk's kernel median against the
# library baseline's (CUB, Thrust) in the same run, and whether gpuk's answer matched the CPU
# reference. One table per GPU model at the end; with several input kinds, each sort row's worst
# ratio over the kinds after it.
# Usage: tools/bench/bench_defaults.sh BUILD_DIR [OUT_DIR]
#   SIZES="10 16 22": only those powers of two (default 10 12 ... 28)
#   ONLY=REGEX: only the cases whose name matches (names: reduce-argmax-float32, sort-sort-uint32-desc,
#               sort-sort_pairs-float32-asc, sort-argsort-int64-asc, search-find-int32, ...; a sort
#               case with a kind other than uniform ends in it: sort-sort-uint32-asc-d16)
#   KINDS="uniform d16 ...": the sorts' input kinds (default uniform): uniform (integers over their
#               whole range, floats in [-1, 1)), d16 and d1024 (that many distinct keys drawn from
#               the same range), labels (integers 0..15; floats skip it), sorted, reversed (the
#               uniform data ordered), normal (floats: mean 0, stddev 1; integers skip it)
#   GPUK="gpuk --kernels DIR": the command instead of BUILD_DIR/gpuk
# Data: as KINDS says; reduce and search take uniform data (unique int32 for search); pairs carry
# uint32 values. Large sizes take fewer repeats. The sort's CPU reference runs on every core
# (and, timed, on one thread too up to 2^24: the plugin's rule): the whole matrix at one kind,
# 250 runs, should take 9 to 12 minutes on an H100 (SIZES, ONLY and KINDS trim it); on an H200
# host of 16 cores a GPU, 2^24 takes about 2 s a run, 2^26 3 s, 2^28 6 s.
source "$(dirname "$0")/../dev/help.sh" "$@"
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

kind_data() {  # KIND DTYPE: the data: block of that input kind, or nothing where it does not apply
  local range='low: -1e30, high: 1e30'
  [[ $2 == float* ]] && range='low: -1, high: 1'
  case $1 in
    uniform) echo "{generator: uniform, $range, seed: 1}" ;;
    d16) echo "{generator: few_distinct, distinct: 16, $range, seed: 1}" ;;
    d1024) echo "{generator: few_distinct, distinct: 1024, $range, seed: 1}" ;;
    labels) [[ $2 == float* ]] || echo "{generator: uniform, low: 0, high: 15, seed: 1}" ;;
    sorted|reversed) echo "{generator: $1, $range, seed: 1}" ;;
    normal) [[ $2 == float* ]] && echo "{generator: normal, mean: 0, stddev: 1, seed: 1}" ;;
  esac
}
sort_case() {  # OPERATION DTYPE ORDER EXTRA: one sort case at every kind
  local op=$1 dtype=$2 order=$3 extra=$4 kind data o=asc
  [ "$order" = descending ] && o=desc
  for kind in ${KINDS:-uniform}; do
    data=$(kind_data "$kind" "$dtype")
    [ -z "$data" ] && continue
    case_ "sort-$op-$dtype-$o$([ "$kind" = uniform ] || echo "-$kind")" sort "$op" "$dtype" "$data" "order: $order\n$extra"
  done
}
for order in ascending descending; do
  for dtype in uint32 int32 float32 uint64 int64 float64; do sort_case sort $dtype $order ""; done
  for dtype in uint32 float32; do sort_case sort_pairs $dtype $order "values: uint32\n"; done
  for dtype in uint32 float32 int64; do sort_case argsort $dtype $order ""; done
done

python3 - "$out" "$(( $(date +%s) - start ))" <<'PY'
import collections, json, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
KINDS = ("d16", "d1024", "labels", "sorted", "reversed", "normal")
rows = collections.defaultdict(list)  # GPU model: rows
for p in out.glob("*.json"):
    r = json.loads(p.read_text())
    m = re.match(r"(.*)-2p(\d+)$", p.stem)
    name, kind = m.group(1), "uniform"
    if name.rsplit("-", 1)[-1] in KINDS:
        name, kind = name.rsplit("-", 1)
    g = r["kernel"]["median_ms"]
    b = r.get("baseline", {}).get("time", {}).get("median_ms")
    v = r.get("verification", {}).get("passed")
    data = r.get("data", {}).get("text", "")
    rows[r.get("device", {}).get("name", "?")].append(
        (name, int(m.group(2)), kind, r.get("variant", "?"), r.get("variant_source", ""), g, b, v, data))
total = below = failed = 0
for gpu, gpu_rows in sorted(rows.items()):
    gpu_rows.sort(key=lambda x: (x[0], x[1], x[2] != "uniform", x[2]))
    print(f"== {gpu}")
    print(f"{'case':<28}{'n':>6} {'kind':<9}{'gpuk ms':>10}{'CUB ms':>10}{'ratio':>7}  verify  chosen")
    worst = {}
    for name, e, kind, variant, source, g, b, v, data in gpu_rows:
        ratio = b / g if b and g else 0
        total += 1
        below += ratio < 1.0
        failed += v is False
        key = (name, e)
        worst[key] = min(worst.get(key, (9e9, "")), (ratio, kind))
        ver = "PASS" if v else ("FAIL" if v is not None else "-")
        src = f" [{source}]" if source else ""
        print(f"{name:<28}{'2^' + str(e):>6} {kind:<9}{g:>10.4f}{(b or 0):>10.4f}{ratio:>7.2f}  {ver:<6}  {variant[:60]}{src[:50]}")
    if any(k[2] != "uniform" for k in gpu_rows):
        print(f"-- {gpu}: worst ratio over the kinds")
        for (name, e), (ratio, kind) in sorted(worst.items()):
            print(f"{name:<28}{'2^' + str(e):>6}  {ratio:>5.2f} ({kind})")
print(f"{total} runs, {below} below 1.0x the baseline, {failed} failed verification; {sys.argv[2]} s")
PY

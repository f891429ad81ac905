#!/usr/bin/env bash
# lower_bound and upper_bound against CUB's DeviceFind::LowerBound / UpperBound and their
# SortedValues variants (the newest CCCL's, tools/bench/cccl_headers.sh) and thrust::lower_bound /
# upper_bound (the toolkit's CCCL, timed by gpuk in the same run): 2^M needles (any order, and
# sorted: `needles: sorted`) in 2^E sorted float32 keys. gpuk runs on the default path (no kernel
# named); every answer is verified (gpuk's and Thrust's against std::lower_bound / upper_bound,
# CUB's by a check of every answer on the device). Prints one table.
# Usage: tools/bench/bench_bounds.sh BUILD_DIR [OUT_DIR]
#   KEYS="20 24 28": the keys' powers of two (default 20 22 24 26 28)
#   NEEDLES="10 16 24": the needles' powers of two (default 10 12 ... 24)
#   NVCC=nvcc: the compiler for the CUB program; CUB=none: leave CUB out (Thrust only);
#   CUB_BIN=FILE: the CUB program built already (`nvcc -std=c++17 -O3 -arch=sm_90 -I"$(tools/bench/
#   cccl_headers.sh)" tools/bench/cub_bounds.cu -o FILE`), where the GPU machine should not build it
# The CUB program is built here (not by CMake, so a missing CCCL never breaks the build). Its keys
# are evenly spaced in [-1, 1) and gpuk's uniform in [-1, 1) sorted; its needles two thirds keys
# and one third uniform in [-1.25, 1.25), gpuk's a third keys, a third a key one step up, a third
# around the keys: the same sizes and shapes of search, not the same bytes.
source "$(dirname "$0")/../dev/help.sh" "$@"
set -uo pipefail
build=${1:-build}
out=${2:-bench-bounds}
mkdir -p "$out"
gpuk=${GPUK:-$build/gpuk}
keys=${KEYS:-20 22 24 26 28}
needles=${NEEDLES:-10 12 14 16 18 20 22 24}

cells=()
for e in $keys; do for m in $needles; do cells+=("$e:$m"); done; done
if [ "${CUB:-}" != none ]; then
  cub="${CUB_BIN:-$out/cub_bounds}"
  if [ -n "${CUB_BIN:-}" ] || { include=$(tools/bench/cccl_headers.sh) && "${NVCC:-nvcc}" -std=c++17 -O3 -arch=native \
       -I"$include" tools/bench/cub_bounds.cu -o "$cub"; }; then
    "$cub" "${cells[@]}" > "$out/cub.tsv" || echo "cub_bounds failed: CUB left out"
  else
    echo "the CUB program did not build (no CCCL 3.5 headers?): CUB left out"
  fi
fi

for cell in "${cells[@]}"; do
  e=${cell%:*}
  m=${cell#*:}
  for op in lower_bound upper_bound; do
    for order in unsorted sorted; do
      f="$out/$op-2p$e-2p$m-$order"
      printf 'family: search\noperation: %s\ndtype: float32\nsize: 2^%s\nneedle_count: %s\nneedles: %s\ndata: {generator: sorted, low: -1, high: 1, seed: 7}\nwarmup: 10\nrepeats: %s\ncpu_repeats: 1\n' \
        "$op" "$e" "$((1 << m))" "$order" "$([ "$m" -le 16 ] && echo 100 || echo 30)" > "$f.yaml"
      "$gpuk" run "$f.yaml" --json "$f.json" > "$f.txt" 2>&1 || echo "$op 2^$e 2^$m $order: exit $? ($(tail -1 "$f.txt"))"
    done
  done
done

python3 - "$out" <<'PY'
import csv, json, pathlib, sys
out = pathlib.Path(sys.argv[1])
cub, library = {}, "CUB left out"
if (out / "cub.tsv").exists():
    for r in csv.DictReader(open(out / "cub.tsv"), delimiter="\t"):
        library = r["library"].split(" (")[-1].rstrip(")")
        cub[(int(r["n"]), int(r["needles"]), r["op"], r["sorted"])] = (float(r["median_ms"]), r["verify"], r["library"])
rows, tname = [], "-"
for p in sorted(out.glob("*_bound-2p*.json")):
    r = json.loads(p.read_text())
    op, e, m, order = p.stem.split("-")
    e, m = int(e[2:]), int(m[2:])
    g = r["kernel"]["median_ms"]
    t = (r.get("baseline") or {}).get("time", {}).get("median_ms")
    tname = (r.get("baseline") or {}).get("name", "-")
    c = cub.get((1 << e, 1 << m, op, order))
    rows.append((op, e, m, order, g, c, t, r.get("verification", {}).get("passed"),
                 (r.get("baseline") or {}).get("note"), r.get("variant", "?")))
print(f"lower_bound / upper_bound, float32 keys; CUB: {library}; Thrust: {tname}")
print(f"{'op':<12}{'keys':>6}{'needles':>8} {'order':<9}{'gpuk ms':>10}{'CUB ms':>10}{'xCUB':>7}{'Thrust ms':>11}{'xThrust':>8}  verify  variant")
for op, e, m, order, g, c, t, ok, tnote, variant in sorted(rows, key=lambda x: (x[0], x[1], x[2], x[3])):
    cms = f"{c[0]:.4f}" if c else "-"
    xc = f"{c[0] / g:.2f}" if c and g else "-"
    xt = f"{t / g:.2f}" if t and g else "-"
    v = ("PASS" if ok else "FAIL") + ("" if c is None else f" CUB {c[1]}") + (f" Thrust: {tnote}" if tnote else "")
    print(f"{op:<12}  2^{e:<3} 2^{m:<4} {order:<9}{g:>10.4f}{cms:>10}{xc:>7}{(t or 0):>11.4f}{xt:>8}  {v}  {variant}")
PY

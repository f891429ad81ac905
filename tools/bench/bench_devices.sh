#!/usr/bin/env bash
# One sweep (default configs/tune_devices.yaml, about 90 variants) on one GPU, then the same
# sweep shared by several (gpuk tune --devices), each with a cold compile cache of its own, nothing
# saved. Prints both wall times, their ratio, both winners (the same, or a tie within the noise)
# and where each run's time went (the reports' time breakdown, per worker for the pooled one).
# Targets (docs/tuning.md, "Where the time goes"): tune_sort.yaml at most 12 s on one GPU and 0.6x
# on two; tune_devices.yaml at most 4 s and 0.8x. A benchmark, not a test.
# Usage: tools/bench/bench_devices.sh [--devices LIST (default all)] [--config FILE] [--build DIR] [--keep DIR]
# (--keep DIR: both runs' reports, text and JSON, are copied there.)
set -euo pipefail
cd "$(dirname "$0")/../.."
devices=all config=configs/tune_devices.yaml build=build keep=
while [ $# -gt 0 ]; do
  case $1 in
    --devices) devices=$2; shift ;;
    --config) config=$2; shift ;;
    --build) build=$2; shift ;;
    --keep) keep=$2; shift ;;
    *) echo "usage: tools/bench/bench_devices.sh [--devices LIST] [--config FILE] [--build DIR] [--keep DIR]" >&2; exit 2 ;;
  esac
  shift
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sweep() {  # NAME ARGS...: wall seconds of one sweep (a failed one's output on stderr: $(...) keeps stdout)
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  "$build/gpuk" --cache-dir "$work/cache-$name" --tuning-db "$work/db-$name.json" tune "$config" --no-save \
    --json "$work/$name.json" "$@" > "$work/$name.txt" 2>&1 || { cat "$work/$name.txt" >&2; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print($end - $start)"
}
one=$(sweep one --device 0)
many=$(sweep many --devices "$devices")
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  cp "$work"/one.txt "$work"/one.json "$work"/many.txt "$work"/many.json "$keep"/
fi
sed -n '1,12p' "$work/many.txt"
python3 - "$work/one.json" "$work/many.json" "$one" "$many" "$devices" <<'PY'
import json, sys
one, many = (json.load(open(p)) for p in sys.argv[1:3])
t1, tn, devices = float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
def winner(r):
    return r.get("best", {}).get("variant"), set(r.get("best", {}).get("ties", []))
def counted(r):
    v = [x for x in r["variants"] if x["status"] != "pruned"]
    return len(v), sum(x["status"] == "ok" for x in v)
w1, ties1 = winner(one)
wn, tiesn = winner(many)
print(f"variants measured: one GPU {counted(one)[0]} ({counted(one)[1]} verified), "
      f"--devices {devices}: {counted(many)[0]} ({counted(many)[1]} verified), on {len(many.get('pooled_devices', []))} GPUs")
print(f"wall time: one GPU {t1:.1f} s, --devices {devices} {tn:.1f} s, ratio {tn / t1:.2f} (target <= 0.6 on two GPUs)")
same = w1 == wn or wn in ties1 or w1 in tiesn
print(f"winner: one GPU {w1}; --devices {devices} {wn}: {'the same' if w1 == wn else 'a tie within the noise' if same else 'DIFFERENT'}")
parts = [("start", "start_s"), ("data", "data_s"), ("reference", "reference_s"), ("cc wall", "compile_wall_s"),
         ("cc summed", "compile_summed_s"), ("cc waited", "compile_wait_s"), ("measure", "measure_s"),
         ("verify", "verify_s"), ("scratch", "scratch_s"), ("recheck", "recheck_s"), ("save", "save_s"),
         ("idle", "idle_s"), ("other", "other_s"), ("total", "total_s")]
rows = [("one GPU", one.get("times", {})), (f"--devices {devices}", many.get("times", {}))]
rows += [(f"  {w['worker']}", w) for w in many.get("worker_times", [])]
print("time breakdown, seconds (cc: NVRTC compiles, beside the rest; cc waited: the measuring thread held up by them;")
print("  a pooled sweep compiles in the parent, its workers' cc are their loads from the cache; idle: a worker waiting):")
print(f"  {'':22}" + "".join(f"{name:>10}" for name, _ in parts))
for label, t in rows:
    print(f"  {label:22}" + "".join(f"{t.get(key, 0):10.2f}" for _, key in parts))
PY

#!/usr/bin/env bash
# Issue 18's target, measured: one sweep of about 90 variants (configs/tune_devices.yaml) on one
# GPU, then the same sweep shared by several (gpuk tune --devices), each with a cold compile cache
# of its own, nothing saved. Prints both wall times, their ratio (target: at most 0.6 on two GPUs)
# and both winners (target: the same, or a tie within the noise). A benchmark, not a test.
# Usage: tools/bench_devices.sh [--devices LIST (default all)] [--config FILE] [--build DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
devices=all config=configs/tune_devices.yaml build=build
while [ $# -gt 0 ]; do
  case $1 in
    --devices) devices=$2; shift ;;
    --config) config=$2; shift ;;
    --build) build=$2; shift ;;
    *) echo "usage: tools/bench_devices.sh [--devices LIST] [--config FILE] [--build DIR]" >&2; exit 2 ;;
  esac
  shift
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sweep() {  # NAME ARGS...: wall seconds of one sweep
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  "$build/gpuk" --cache-dir "$work/cache-$name" --tuning-db "$work/db-$name.json" tune "$config" --no-save \
    --json "$work/$name.json" "$@" > "$work/$name.txt" 2>&1 || { cat "$work/$name.txt"; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print($end - $start)"
}
one=$(sweep one --device 0)
many=$(sweep many --devices "$devices")
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
PY

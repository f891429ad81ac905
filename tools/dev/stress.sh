#!/usr/bin/env bash
# Many gpuk processes at once on one compile cache and one tuning database, then the same with
# processes killed (SIGKILL) at random moments; docs/reliability.md.
#
# GPU mode, per round, each phase starting from an EMPTY cache directory and database:
#   load  16 `gpuk run` (reduce, search, sort; some identical, three `variant: auto` reading the
#         database while it is written) and 4 `gpuk tune` (two identical) at once. Every process
#         must exit 0 (every run verified); every cache entry's checksum must hold; the database
#         must be valid JSON holding every tune process's winner; no temporary file may be left.
#   kill  the same 20 processes, about half of them killed with SIGKILL (their whole process
#         group: a tune's sweep child too) at a random moment in their first 6 s; the others must
#         exit 0. No cache entry may be damaged, the database must be valid and hold the winner of
#         every tune that finished.
#   next  the same 20 again on what the kill phase left: every one must exit 0 (a damaged entry
#         would be rebuilt and said so); afterwards nothing is damaged or left, the winners are all
#         there.
# CPU mode (no GPU needed; chosen by itself without one, or with --cpu): the same three phases
# with 20 `gpuk check` (NVRTC compiles of the run configs, for sm_90) into one cache. The tuning
# database's concurrent and killed writers without a GPU are CPU tests (tests/core/test_concurrency.cpp).
#
# Usage: tools/dev/stress.sh [--cpu | --gpu] [--rounds N (default 3)] [--build DIR (default build)]
# Needs: cmake --build DIR --target gpuk gpuk_stress_check (and the plugins). Prints one line per
# check and "stress: all held" at the end; exit status 0 then, 1 when anything did not hold.
set -uo pipefail
cd "$(dirname "$0")/../.."
build=build rounds=3 mode=auto
while [ $# -gt 0 ]; do
  case $1 in
    --cpu) mode=cpu ;;
    --gpu) mode=gpu ;;
    --rounds) rounds=$2; shift ;;
    --build) build=$2; shift ;;
    *) echo "usage: tools/dev/stress.sh [--cpu | --gpu] [--rounds N] [--build DIR]" >&2; exit 2 ;;
  esac
  shift
done
gpuk=$build/gpuk check=$build/gpuk_stress_check
for exe in "$gpuk" "$check"; do
  [ -x "$exe" ] || { echo "stress: $exe is missing: cmake --build $build --target gpuk gpuk_stress_check" >&2; exit 2; }
done
gpus=$("$check" gpus)
if [ "$mode" = auto ]; then
  if [ "${gpus%% *}" = 0 ]; then
    echo "stress: no GPU ${gpus#0 }: the CPU part only (gpuk check)"
    mode=cpu
  else
    mode=gpu
  fi
fi
[ "$mode" = gpu ] && [ "${gpus%% *}" = 0 ] && { echo "stress: --gpu needs a GPU: $gpus" >&2; exit 1; }

work=$(mktemp -d)
keep=0
trap '[ $keep = 1 ] || rm -rf "$work"' EXIT
failures=0
fail() { echo "FAILED  $*"; failures=$((failures + 1)); }

# --- The configs: small, so that a phase takes seconds ----------------------------------------
configs=$work/configs
mkdir -p "$configs"
common='warmup: 2
repeats: 10
cpu_repeats: 1'
run_config() {  # NAME BODY
  printf '%s\n%s\n' "$2" "$common" > "$configs/$1.yaml"
}
run_config r01 'family: reduce
operation: argmax
abs: true
kernel: onepass
params: {BLOCK: 256, UNROLL: 2}
dtype: float32
size: 1000003
data: {generator: uniform, low: -1, high: 1, seed: 1}'
cp "$configs/r01.yaml" "$configs/r02.yaml"
run_config r03 'family: reduce
operation: sum
kernel: block_partials
dtype: int64
size: 500001
data: {generator: uniform, low: -1000, high: 1000, seed: 2}'
run_config r04 'family: reduce
operation: min
kernel: warp_shuffle
dtype: float64
size: 300007
baseline: false'
run_config r05 'family: search
operation: find
kernel: fast
dtype: int32
value_at: random
size: 1000003
data: {generator: permutation, seed: 4}'
cp "$configs/r05.yaml" "$configs/r06.yaml"
run_config r07 'family: search
operation: count
kernel: coalesced_unrolled
params: {K: 4}
dtype: float32
value_at: middle
size: 200003
data: {generator: few_distinct, distinct: 20, low: -10, high: 10, seed: 5}'
run_config r08 'family: search
operation: any
kernel: fast
dtype: int64
value_at: absent
size: 300001'
run_config r09 'family: sort
operation: sort
kernel: radix
dtype: uint32
size: 200003
data: {generator: uniform, low: 0, high: 4294967295, seed: 6}'
cp "$configs/r09.yaml" "$configs/r10.yaml"
run_config r11 'family: sort
operation: argsort
kernel: radix
dtype: int64
size: 50001
data: {generator: few_distinct, distinct: 50, low: -1000, high: 1000, seed: 7}'
run_config r12 'family: sort
operation: sort_pairs
kernel: rank_bucket
params: {ITEMS: 4}
dtype: float32
order: descending
size: 4096'
run_config r13 'family: sort
operation: sort
kernel: radix_block
dtype: int32
size: 3001
baseline: false'
# variant: auto, reading the database while the tunes below write it (the same keys).
run_config r14 'family: reduce
operation: argmax
dtype: float32
size: 2^20
variant: auto'
run_config r15 'family: search
operation: find
dtype: int32
size: 2^18
variant: auto'
run_config r16 'family: sort
operation: sort
dtype: uint32
size: 4096
variant: auto'
tune_config() {  # NAME BODY
  printf '%s\nwarmup: 2\nrepeats: 10\nrecheck: {top: 2, repeats: 10}\n' "$2" > "$configs/$1.yaml"
}
tune_config t1 'family: reduce
operation: argmax
dtype: float32
size: 2^20
kernels: [onepass]
params: {BLOCK: [128, 256], UNROLL: [2, 4]}'
cp "$configs/t1.yaml" "$configs/t2.yaml"
tune_config t3 'family: search
operation: find
dtype: int32
size: 2^18
kernels: [fast]
params: {BLOCK: [128, 256], UNROLL: [2, 4]}'
tune_config t4 'family: sort
operation: sort
dtype: uint32
size: 4096
data: {generator: uniform, low: 0, high: 4294967295, seed: 13}
kernels: [rank_bucket]
params: {ITEMS: [4, 8], SPLIT: [8, 16]}'

# --- One phase: the 20 processes at once ------------------------------------------------------
# start_all DIR: starts them (each in its own process group, so that a kill takes a tune's sweep
# child too) with DIR/cache and DIR/tuning.json; sets $pids, $names.
start_all() {
  local dir=$1 name
  mkdir -p "$dir/logs"
  pids=() names=()
  local common_args=(--cache-dir "$dir/cache" --tuning-db "$dir/tuning.json")
  for name in r01 r02 r03 r04 r05 r06 r07 r08 r09 r10 r11 r12 r13 r14 r15 r16 t1 t2 t3 t4; do
    local cfg=$configs/$name.yaml
    if [ "$mode" = cpu ]; then
      # tune configs are no run configs: the CPU part checks a run config in their place
      [ "${name:0:1}" = t ] && cfg=$configs/r0${name:1}.yaml
      GPUK_CACHE_DIR=$dir/cache setsid "$gpuk" "${common_args[@]}" check --arch sm_90 "$cfg" > "$dir/logs/$name.log" 2>&1 &
    elif [ "${name:0:1}" = t ]; then
      GPUK_CACHE_DIR=$dir/cache setsid "$gpuk" "${common_args[@]}" tune "$cfg" --json "$dir/$name.json" > "$dir/logs/$name.log" 2>&1 &
    else
      GPUK_CACHE_DIR=$dir/cache setsid "$gpuk" "${common_args[@]}" run "$cfg" > "$dir/logs/$name.log" 2>&1 &
    fi
    pids+=($!) names+=("$name")
  done
}

# wait_all DIR VICTIMS...: waits for every process; a victim may have died of SIGKILL, any other
# process must exit 0. Sets $finished_tunes (the JSON reports of tunes that exited 0).
wait_all() {
  local dir=$1; shift
  local victims=" $* " i status name
  finished_tunes=()
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" 2> /dev/null; status=$?  # (bash's "Killed" notes are not news here)
    name=${names[$i]}
    if [ $status = 0 ]; then
      [ -f "$dir/$name.json" ] && finished_tunes+=("$dir/$name.json")
    elif [ $status = 137 ] && [[ $victims == *" $name "* ]]; then
      :  # killed, as planned
    else
      fail "$name exited $status (log: $dir/logs/$name.log)"
      tail -5 "$dir/logs/$name.log" | sed 's/^/        /'
    fi
  done
}

check_state() {  # DIR [--temporaries-allowed]: the cache, and (GPU) the database
  local dir=$1 allow=${2:-}
  "$check" cache "$dir/cache" $allow | sed 's/^/        /'
  [ "${PIPESTATUS[0]}" = 0 ] || fail "the compile cache of $dir"
  if [ "$mode" = gpu ]; then
    "$check" db "$dir/tuning.json" $allow "${finished_tunes[@]}" | sed 's/^/        /'
    [ "${PIPESTATUS[0]}" = 0 ] || fail "the tuning database of $dir"
  fi
}

said_so() {  # DIR: what the processes said about damage or leftovers (allowed: they rebuilt it)
  grep -h "damaged\|removed [0-9]* temporary\|moved it to" "$1"/logs/*.log 2>/dev/null | sort | uniq -c | sed 's/^/        said: /'
}

states_before=$(ls -d /tmp/gpuk-tune-journal-* 2>/dev/null | wc -l)
start=$SECONDS
for round in $(seq 1 "$rounds"); do
  dir=$work/round$round
  t0=$SECONDS
  start_all "$dir/load"
  wait_all "$dir/load"
  echo "round $round load: 20 processes ($mode) at once into an empty cache, $((SECONDS - t0)) s"
  check_state "$dir/load"
  said_so "$dir/load"

  t0=$SECONDS
  start_all "$dir/kill"
  victims=()
  for i in "${!pids[@]}"; do
    if [ $((RANDOM % 2)) = 0 ]; then
      victims+=("${names[$i]}")
      ( sleep "$((RANDOM % 6)).$((RANDOM % 1000))"; kill -KILL -- "-${pids[$i]}" 2> /dev/null ) &
    fi
  done
  wait_all "$dir/kill" "${victims[@]}"
  wait  # the killers
  echo "round $round kill: 20 processes, ${#victims[@]} sent SIGKILL at random moments (${victims[*]}), $((SECONDS - t0)) s"
  check_state "$dir/kill" --temporaries-allowed
  said_so "$dir/kill"

  t0=$SECONDS
  mv "$dir/kill" "$dir/next"  # the cache and database as the killed processes left them
  rm -rf "$dir/next/logs" "$dir"/next/t?.json
  start_all "$dir/next"
  wait_all "$dir/next"
  echo "round $round next: the same 20 on what the killed ones left, $((SECONDS - t0)) s"
  check_state "$dir/next"
  said_so "$dir/next"
done
states_after=$(ls -d /tmp/gpuk-tune-journal-* 2>/dev/null | wc -l)
if [ "$states_after" -gt "$states_before" ]; then
  echo "note: $((states_after - states_before)) /tmp/gpuk-tune-journal-* journal(s) of killed tunes without a cache are left"
fi
if [ $failures = 0 ]; then
  echo "stress: all held ($rounds round(s), $mode, $((SECONDS - start)) s)"
  exit 0
fi
keep=1
echo "stress: $failures check(s) did not hold; the logs are in $work"
exit 1

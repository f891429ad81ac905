#!/usr/bin/env bash
# A tuning matrix sharded over a Slurm job array, on a real single-node Slurm started (and
# stopped) here: munged, slurmctld and slurmd of Debian's munge and slurm-wlm, in a temporary
# directory, as the user running the test. Three array tasks each run a share of a small matrix
# (`--shard K/3`) with the fake measurer (gpuk_fake_shard: no GPU), `gpuk tune MATRIX --merge`
# joins their results directories, and its --export must hold the same winners as one
# unsharded run's; then two tasks of a declared kernels' matrix (cells over named sizes) alike. Exits 77 (skipped) with the reason where Slurm or munge is not installed or
# will not start.
#   tests/tune/slurm_shards.sh BUILD_DIR
set -uo pipefail
build="$(cd "${1:?usage: slurm_shards.sh BUILD_DIR}" && pwd)"
gpuk="$build/gpuk"
tool="$build/gpuk_fake_shard"
skip() { echo "SKIPPED: slurm_shards: $*"; exit 77; }
for exe in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v "$exe" >/dev/null 2>&1 || [ -x "/usr/sbin/$exe" ] ||
    skip "$exe is not installed (Debian packages slurm-wlm and munge; tools/install-deps.sh installs them)"
done
export PATH="$PATH:/usr/sbin"
[ -x "$gpuk" ] && [ -x "$tool" ] || { echo "slurm_shards: build gpuk and gpuk_fake_shard first ($build)" >&2; exit 1; }

work="$(mktemp -d /tmp/gpuk-slurm-XXXXXX)"
chmod 700 "$work"
pids=()
cleanup() {
  [ -n "${SLURM_CONF:-}" ] && scancel --quiet --user "$(id -un)" >/dev/null 2>&1
  for f in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munged.pid"; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
  sleep 0.5
  for f in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munged.pid"; do
    [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "slurm_shards: FAILED: $*" >&2
  for log in "$work"/*.log; do [ -f "$log" ] && { echo "--- $log" >&2; tail -20 "$log" >&2; }; done
  exit 1
}

# munge: its own key and socket, in the temporary directory.
mkdir -p "$work/munge"
chmod 700 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.sock" \
  --pid-file="$work/munged.pid" --log-file="$work/munged.log" --seed-file="$work/munge/seed" \
  >"$work/munged.out" 2>&1 || skip "munged would not start: $(tail -1 "$work/munged.out")"

# Slurm: one node (this host), one partition, ports of its own.
host="$(hostname -s)"
user="$(id -un)"
port=$((20000 + RANDOM % 20000))
cpus="$(nproc)"
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF="$work/slurm.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=gpuktest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.sock
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=gpuk Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 || skip "slurmctld would not start: $(tail -1 "$work/slurmctld.out")"
slurmd -f "$SLURM_CONF" -N "$host" >"$work/slurmd.out" 2>&1 || skip "slurmd would not start: $(tail -1 "$work/slurmd.out")"
ready=""
for _ in $(seq 1 60); do
  state="$(sinfo -h -n "$host" -o %T 2>/dev/null | head -1)"
  case "$state" in idle*|mix*|alloc*) ready=1; break ;; esac
  sleep 0.5
done
[ -n "$ready" ] || skip "the Slurm node did not come up (state '${state:-none}'; $(tail -1 "$work/slurmd.log" 2>/dev/null))"

# A matrix: two operations, two dtypes, two sizes, nine cells.
cat >"$work/m.yaml" <<'YAML'
family: reduce
sizes: [2^10, 2^14]
dtypes: [float32, int32]
warmup: 2
repeats: 7
kernels: [onepass]
params: {BLOCK: [128, 256, 512], UNROLL: [1, 2, 4, 8], BLOCKS_PER_SM: [2]}
operations:
  - operation: argmax
    abs: [false, true]
  - operation: sum
    dtypes: [float64]
    sizes: [2^20]
    kernels: [warp_shuffle]
    params: {BLOCK: [128, 256, 512], BLOCKS_PER_SM: [2, 4]}
YAML

# The declared kernels' matrix (docs/declared.md): cells over named-size sets, five cells.
cat >"$work/d.yaml" <<'YAML'
family: kernel
warmup: 2
repeats: 7
reference: {kernel: stencil2d_naive}
operations:
  - operation: stencil2d
    sizes: [{nx: 1000, ny: 300}, {nx: 300, ny: 1000}, {nx: 4099, ny: 4097}]
    params: {block_size_x: [16, 32, 64], block_size_y: [2, 4, 8], tile_size_y: [1, 2]}
  - operation: matmul
    sizes: [{m: 256, n: 256, k: 256}, {m: 1999, n: 2001, k: 1001}]
    reference: {kernel: matmul_naive}
    compare: {C: {atol: 1e-4, rtol: 1e-4}}
    params: {TILE_M: [32, 64], TILE_N: [32, 64], TILE_K: [16], WORK_M: [2, 4], WORK_N: [2, 4]}
YAML

# A matrix's shards as a job array, one task per shard, as docs/tuning.md's recipe runs `gpuk
# tune` (one GPU each); merged, exported, and against one unsharded run.
#   shards NAME SHARDS PER_SHARD CELLS
shards() {
  local name="$1" count="$2" per="$3" cells="$4" start rc=0
  start=$(date +%s)
  timeout 120 sbatch --array=0-$((count - 1)) --wait --ntasks=1 --cpus-per-task=1 --job-name=gpuk-shards \
    --output="$work/$name-task-%a.log" --chdir="$work" \
    --wrap "'$tool' '$work/$name.yaml' \"\$SLURM_ARRAY_TASK_ID/\$SLURM_ARRAY_TASK_COUNT\" \"$work/$name-results/shard-\$SLURM_ARRAY_TASK_ID\"" \
    >"$work/$name-sbatch.log" 2>&1 || rc=$?
  # Fake shards take a second: an array not done in 2 minutes is Slurm unable to run jobs here.
  [ "$rc" -ne 124 ] || skip "Slurm did not run the job array within 120 s ($(tail -1 "$work/slurmd.log" 2>/dev/null))"
  [ "$rc" -eq 0 ] || fail "$name: the job array did not succeed ($(cat "$work/$name-sbatch.log"))"
  for k in $(seq 0 $((count - 1))); do
    grep -q "shard $k/$count: $per of $cells cells measured" "$work/$name-task-$k.log" ||
      fail "$name: task $k: $(cat "$work/$name-task-$k.log")"
  done
  echo "slurm_shards: $name: $count array tasks ran in $(($(date +%s) - start)) s"

  "$gpuk" tune "$work/$name.yaml" --merge "$work/$name-results"/shard-* --out "$work/$name-merged" \
    --export "$work/$name-merged.json" >"$work/$name-merge.log" 2>&1 || fail "$name: gpuk tune --merge: $(cat "$work/$name-merge.log")"
  grep -q "$cells of $cells cells" "$work/$name-merge.log" || fail "$name: the merge did not find every cell: $(cat "$work/$name-merge.log")"
  "$tool" "$work/$name.yaml" 0/1 "$work/$name-whole" >/dev/null || fail "$name: the unsharded run"
  "$gpuk" tune "$work/$name.yaml" --merge "$work/$name-whole" --out "$work/$name-whole" --export "$work/$name-whole.json" \
    >"$work/$name-whole.log" 2>&1 || fail "$name: gpuk tune --export of the unsharded run: $(cat "$work/$name-whole.log")"
  "$tool" --same "$work/$name-merged.json" "$work/$name-whole.json" || fail "$name: the merged shards' winners differ from one run's"
}
shards m 3 3 9
shards d 2 "[23]" 5
echo "slurm_shards: passed"

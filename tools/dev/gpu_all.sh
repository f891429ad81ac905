#!/usr/bin/env bash
# The whole GPU check of a checkout on one machine: build, every GPU test program (each alone on
# a GPU, the programs spread over the machine's GPUs, one lane per GPU), the stress test
# (tools/dev/stress.sh --gpu --rounds 3), pytest, and the declared-kernel family from the CLI
# (each configs/kernel_*.yaml run, each configs/tune_kernel_*.yaml swept, memcheck on the
# stencil, configs/tune_matrix_kernel.yaml in two shards merged). docs/reliability.md quotes its summary.
#
# Usage: tools/dev/gpu_all.sh [BUILD_DIR (default /tmp/gpuk-gpu-all)]
# Writes summary.txt, build.log, lane<i>.log, pytest.log, stress.log and declared.log under $OUT
# (default out/gpu_all; each lane log names its programs' three slowest test cases); prints the
# summary last. Sources .deps/env.sh when it is there.
source "$(dirname "$0")/help.sh"
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-out/gpu_all}; mkdir -p "$OUT"
[ -f .deps/env.sh ] && source .deps/env.sh
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
B=${1:-/tmp/gpuk-gpu-all}
nvidia-smi -L >/dev/null 2>&1 || { echo "gpu_all: no NVIDIA GPU here (nvidia-smi -L fails)" >&2; exit 77; }
t0=$(date +%s)
nvidia-smi -L | tee $OUT/summary.txt
ngpu=$(nvidia-smi -L | wc -l)
{ cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(command -v python3) && cmake --build $B -j$(nproc); } > $OUT/build.log 2>&1 || { tail -60 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s" | tee -a $OUT/summary.txt
progs=$(ls $B/tests/gpuk_gpu_*_tests | xargs -n1 basename)
lane() {  # lane i runs every ngpu-th program on GPU i
  local i=$1 k=0
  for p in $progs; do
    if [ $(( k % ngpu )) -eq $i ]; then
      local s=$(date +%s)
      ( cd $B/tests && CUDA_VISIBLE_DEVICES=$i timeout 180 ./$p --duration=true ) > /tmp/lane_$p.log 2>&1
      local rc=$?
      echo "$p rc=$rc $(( $(date +%s) - s )) s GPU $i $(grep -E '^\[doctest\] (test cases|assertions)' /tmp/lane_$p.log | tr '\n' ' ')" >> $OUT/summary.txt
      { echo "===== $p rc=$rc"; [ $rc -ne 0 ] && tail -80 /tmp/lane_$p.log || tail -5 /tmp/lane_$p.log
        echo "slowest test cases:"; grep -E '^[0-9]+\.[0-9]+ s: ' /tmp/lane_$p.log | sort -rn | head -3; } >> $OUT/lane$i.log
    fi
    k=$((k + 1))
  done
}
# pytest and the stress test, on the GPU named.
py_test() {
  local s=$(date +%s)
  (CUDA_VISIBLE_DEVICES=$1 PYTHONPATH=$B/python${PYTHONPATH:+:$PYTHONPATH} timeout 300 python3 -m pytest -q -rs -p no:cacheprovider --timeout 90 python/tests) > $OUT/pytest.log 2>&1
  echo "pytest rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/pytest.log)" >> $OUT/summary.txt
}
stress() {
  local s=$(date +%s)
  CUDA_VISIBLE_DEVICES=$1 timeout 240 tools/dev/stress.sh --gpu --rounds 3 --build $B > $OUT/stress.log 2>&1
  echo "stress rc=$? $(( $(date +%s) - s )) s: $(tail -1 $OUT/stress.log)" >> $OUT/summary.txt
}
declared() {  # the declared-kernel family from the CLI: each shipped config, a sweep, memcheck
  local s=$(date +%s)
  {
    for c in configs/kernel_*.yaml; do echo "== gpuk run $c"; CUDA_VISIBLE_DEVICES=$1 timeout 60 $B/gpuk run $c; echo "rc=$?"; done
    for c in configs/tune_kernel_*.yaml; do echo "== gpuk tune $c"; /usr/bin/time -f "wall %e s" env CUDA_VISIBLE_DEVICES=$1 timeout 90 $B/gpuk tune $c --no-save; echo "rc=$?"; done
    echo "== memcheck kernel_stencil2d"; CUDA_VISIBLE_DEVICES=$1 timeout 90 compute-sanitizer --tool memcheck $B/gpuk run configs/kernel_stencil2d.yaml --repeats 2 2>&1 | tail -5
    # The declared kernels' matrix in two shards, merged: each cell's winner against its naive kernel.
    local m=configs/tune_matrix_kernel.yaml w=/tmp/gpuk-gpu-all-matrix; rm -rf $w
    for k in 0 1; do echo "== gpuk tune $m --shard $k/2"; CUDA_VISIBLE_DEVICES=$1 timeout 120 $B/gpuk tune $m --shard $k/2 --out $w/s$k; echo "rc=$?"; done
    echo "== gpuk tune $m --merge"; $B/gpuk tune $m --merge $w/s0 $w/s1 --out $w/merged --export $w/e.json; echo "rc=$?"
  } > $OUT/declared.log 2>&1
  echo "declared family CLI $(( $(date +%s) - s )) s: $(grep -c '^rc=0' $OUT/declared.log) of $(grep -c '^rc=' $OUT/declared.log) rc=0" >> $OUT/summary.txt
}
# Every GPU a lane: its share of the test programs, then the last lane pytest and the one
# before it (the same with one GPU) the stress test.
last=$((ngpu - 1)); before=$(( ngpu >= 2 ? ngpu - 2 : 0 ))
for i in $(seq 0 $last); do
  { lane $i; [ $i -eq $before ] && stress $i; [ $i -eq $last ] && py_test $i; [ $i -eq 0 ] && declared $i; true; } &
done
wait
echo "total $(( $(date +%s) - t0 )) s" >> $OUT/summary.txt
cat $OUT/summary.txt

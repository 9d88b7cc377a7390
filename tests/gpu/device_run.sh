#!/usr/bin/env bash
# Runs on the GPU machine, in the repository root, after tests/gpu/pack.sh ran here:
# GPU tests, examples (also under compute-sanitizer), tessera and Triton benchmarks side by side.
# Prints a short table last. Logs go to $OUT when set.
set -uo pipefail
OUT=${OUT:-/tmp/tessera-out}; mkdir -p "$OUT"
W=/tmp/tessera-pack; rm -rf $W; mkdir -p $W; tar -C $W -xJf .pack/tessera.tar.xz
export LD_LIBRARY_PATH=$W/lib:${LD_LIBRARY_PATH:-}
export PATH=$W/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $OUT/gpu.txt

# Examples and tests compile into a disk cache of their own (the benchmarks set theirs).
export TESSERA_CACHE_DIR=$(mktemp -d)
echo "== examples on the GPU"
for e in vector_add fused_elu broadcast_2d softmax layer_norm layer_norm_bwd rms_norm_bwd online_softmax; do $e || echo "EXAMPLE FAILED: $e"; done 2>&1 | tee $OUT/examples.log
echo "== resources and build times of the layer-norm example (TESSERA_DUMP=resources,times), cold then from disk"
D=$(mktemp -d); for i in 1 2; do TESSERA_CACHE_DIR=$D TESSERA_DUMP=resources,times CUDA_CACHE_DISABLE=1 layer_norm 2>&1 | grep "^tessera:" | head -4; done
tessera-cache --dir $D list | head -3
echo "== GPU tests"
tessera_gpu_tests 2>&1 > $OUT/gpu_tests.log; grep -E "FAILED|failed|passed|error" $OUT/gpu_tests.log | head -40
echo "== compute-sanitizer"
(compute-sanitizer --tool memcheck vector_add 4099 2>&1 | tail -3) | tee $OUT/sanitizer.log
(compute-sanitizer --tool memcheck broadcast_2d 77 131 2>&1 | tail -3) | tee -a $OUT/sanitizer.log

echo "== benchmarks"
export CUDA_CACHE_DISABLE=1
# Two rounds, alternating tessera and Triton, so that clock or thermal drift during the run falls
# on both sides alike; compare.py keeps each side's best.
: > $OUT/bench_tessera.jsonl; : > $OUT/bench_triton.jsonl
for round in 1 2; do
  tessera_bench all >> $OUT/bench_tessera.jsonl 2>&1
  python3 tests/bench/triton_ref.py all >> $OUT/bench_triton.jsonl 2>&1
done
# Cold first calls (empty caches), then disk hits (a fresh process, the cache the cold one filled).
for k in vector_add layer_norm; do
  for i in 1 2 3; do
    export TESSERA_CACHE_DIR=$(mktemp -d)
    tessera_bench first_call $k >> $OUT/bench_tessera.jsonl 2>&1
    tessera_bench first_call $k >> $OUT/bench_tessera.jsonl 2>&1
    export TRITON_CACHE_DIR=$(mktemp -d)
    python3 tests/bench/triton_ref.py first_call $k first_call >> $OUT/bench_triton.jsonl 2>&1
    python3 tests/bench/triton_ref.py first_call $k disk_hit >> $OUT/bench_triton.jsonl 2>&1
  done
done
unset TESSERA_CACHE_DIR TRITON_CACHE_DIR
# Autotuning 8 configs, cold and from the disk (each script uses fresh cache folders).
export TESSERA_CACHE_DIR=$(mktemp -d)
tessera_bench_autotune >> $OUT/bench_tessera.jsonl 2>>$OUT/autotune.log
python3 tests/bench/triton_autotune.py >> $OUT/bench_triton.jsonl 2>>$OUT/autotune.log
unset TESSERA_CACHE_DIR
grep -v '^{' $OUT/bench_tessera.jsonl $OUT/bench_triton.jsonl | head -20
python3 tests/bench/compare.py $OUT/bench_tessera.jsonl $OUT/bench_triton.jsonl | tee $OUT/table.txt

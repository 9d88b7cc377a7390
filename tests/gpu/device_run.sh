#!/usr/bin/env bash
# Runs on the GPU machine, in the repository root, after tests/gpu/pack.sh ran here: examples, the
# GPU tests (tessera_gpu_tests, tessera_random_gpu_tests), examples under compute-sanitizer, and
# tessera and Triton benchmarks side by side. Prints a short table, then every step that failed,
# and exits 1 when any did: an example or a test binary that fails, a test binary that skips (exit
# 77: it found no GPU, which here is a failure), a sanitizer error, a benchmark program that fails.
# Logs go to $OUT when set.
# STEPS (comma list, default all): examples, tests, conformance (tests/conformance on the GPU),
# torch (the PyTorch ops: build, check, bench;
# with training also the training runs), sanitize (tests/gpu/sanitize_gpu.sh: memcheck,
# racecheck and synccheck over every example and GPU test binary), multigpu (the [multi_gpu] cases,
# on the two-GPU machine), matmul (cold compile, autotuning
# and TFLOP/s, against Triton and cuBLAS; matmul_tessera: tessera's side only), attention
# (forward TFLOP/s against SDPA and Triton; not in the default list), bench. A device call is limited
# to 10 minutes, so a run can be split: STEPS=examples,tests,sanitize then STEPS=bench.
# GPU_TESTS_ONLY=SPEC narrows the tests step to those cases of tessera_gpu_tests.
set -uo pipefail
OUT=${OUT:-/tmp/tessera-out}; mkdir -p "$OUT"
STEPS=${STEPS:-examples,tests,conformance,torch,training,sanitize,matmul,bench}
step() { [[ ",$STEPS," == *",$1,"* ]]; }
FAILED=()
SKIPPED=()
fail() { FAILED+=("$1"); echo "FAILED: $1"; }

W=/tmp/tessera-pack; rm -rf $W; mkdir -p $W
tar -C $W -xJf .pack/tessera.tar.xz || { echo "FAILED: cannot unpack .pack/tessera.tar.xz (run tests/gpu/pack.sh first)"; exit 1; }
export LD_LIBRARY_PATH=$W/lib:${LD_LIBRARY_PATH:-}
export PATH=$W/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $OUT/gpu.txt
(( PIPESTATUS[0] == 0 )) || fail "nvidia-smi (no GPU or driver?)"

# Examples and tests compile into a disk cache of their own (the benchmarks set theirs).
export TESSERA_CACHE_DIR=$(mktemp -d)
if step examples; then
echo "== examples on the GPU"
: > $OUT/examples.log
for e in vector_add fused_elu broadcast_2d softmax layer_norm layer_norm_bwd rms_norm_bwd online_softmax matmul matmul_fused attention attention_bwd; do
  $e 2>&1 | tee -a $OUT/examples.log
  rc=${PIPESTATUS[0]}
  (( rc == 0 )) || fail "example $e (exit $rc)"
done
echo "== resources and build times of the layer-norm example (TESSERA_DUMP=resources,times), cold then from disk"
D=$(mktemp -d)
for i in 1 2; do
  TESSERA_CACHE_DIR=$D TESSERA_DUMP=resources,times CUDA_CACHE_DISABLE=1 layer_norm > $OUT/layer_norm_dump.$i.log 2>&1
  rc=$?
  grep "^tessera:" $OUT/layer_norm_dump.$i.log | head -4
  (( rc == 0 )) || fail "example layer_norm with TESSERA_DUMP=resources,times, run $i (exit $rc)"
done
tessera-cache --dir $D list | head -3
fi

# A test binary: 0 passed; 77 skipped, which on this machine means it saw no GPU: a failure.
run_tests() {  # name [args...]
  local name=$1; shift
  local log=$OUT/${RUN_LOG:-$name}.log
  echo "== $name"
  "$name" "$@" > "$log" 2>&1
  local rc=$?
  grep -E "FAILED|SKIPPED|failed|passed|^seed|error" "$log" | head -40
  case $rc in
    0) ;;
    77) fail "$name skipped its tests (exit 77: no GPU found, or a case could not run), see $log" ;;
    *) fail "$name (exit $rc), see $log" ;;
  esac
}
if step tests && [ -n "${GPU_TESTS_ONLY:-}" ]; then
# GPU_TESTS_ONLY: a Catch test spec; runs just those cases of tessera_gpu_tests (a re-check).
run_tests tessera_gpu_tests "$GPU_TESTS_ONLY"
elif step tests; then
run_tests tessera_gpu_tests
# The sm_80 lowering (mma.sync, ldmatrix, cp.async; no wgmma) on the H200 as well.
RUN_LOG=tessera_gpu_tests_sm80 TESSERA_CUDA_ARCH=sm_80 run_tests tessera_gpu_tests "[dot]"
if command -v tessera_random_gpu_tests > /dev/null; then
  run_tests tessera_random_gpu_tests
else
  SKIPPED+=("tessera_random_gpu_tests (not in the pack)")
  echo "SKIPPED: tessera_random_gpu_tests is not in the pack"
fi
# Triton's tl.randint4x / rand / randn against the reference Philox that numerics_gpu_test.cpp holds
# tessera's to: together, tessera's random numbers are Triton's.
echo "== Triton's random numbers against the reference Philox"
python3 tests/gpu/triton_random_check.py 2>&1 | tee $OUT/triton_random.log
(( PIPESTATUS[0] == 0 )) || fail "tests/gpu/triton_random_check.py (see $OUT/triton_random.log)"

fi

# The conformance suite (tests/conformance: Triton's semantics, host-computed expectations) on the GPU.
if step conformance; then
if command -v tessera_conformance_tests > /dev/null; then
  RUN_LOG=conformance_cuda TESSERA_CONFORMANCE_EXECUTOR=cuda run_tests tessera_conformance_tests
  grep -A12 "^conformance:" $OUT/conformance_cuda.log | head -14
else
  fail "tessera_conformance_tests is not in the pack"
fi
fi

# One process, two GPUs (on the two-GPU machine): one kernel launched on both devices, the
# autotuner on device 1, launches mixing devices refused. It fails on a machine with one GPU.
if step multigpu; then
n=$(nvidia-smi -L | wc -l)
if (( n < 2 )); then fail "STEPS=multigpu needs two GPUs, this machine has $n"; else
RUN_LOG=tessera_gpu_tests_multi_gpu run_tests tessera_gpu_tests "[multi_gpu]"
# Data-parallel training on tessera's PyTorch ops, one rank per GPU (NCCL), against one GPU.
if [ -f $W/lib/libtessera_torch.so ] || bash tests/gpu/build_torch_ops.sh > $OUT/torch_build.log 2>&1; then
  python3 examples/training/gpt_ddp.py --spawn $n --lib $W/lib/libtessera_torch.so > $OUT/gpt_ddp.log 2>&1 \
    || fail "examples/training/gpt_ddp.py on $n GPUs (see $OUT/gpt_ddp.log)"
  tail -4 $OUT/gpt_ddp.log
else
  fail "tests/gpu/build_torch_ops.sh (see $OUT/torch_build.log)"
fi
fi
fi

# The tessera::* PyTorch ops (dsl/torch/): built here against this machine's PyTorch, checked on
# CUDA tensors (values, gradients, meta kernels, torch.library.opcheck), benchmarked against
# torch's eager ops and torch.compile, and the training runs (examples/training/gpt.py).
if step torch; then
echo "== tessera::torch ops: build against this PyTorch"
if bash tests/gpu/build_torch_ops.sh > $OUT/torch_build.log 2>&1; then
  TLIB=$W/lib/libtessera_torch.so
  echo "== tests/torch/ops_check.py on CUDA tensors"
  python3 tests/torch/ops_check.py --lib $TLIB --device cuda > $OUT/torch_ops_check.log 2>&1 \
    || fail "tests/torch/ops_check.py (see $OUT/torch_ops_check.log)"
  grep -E "FAIL|ops_check:" $OUT/torch_ops_check.log | head -30
  echo "== a user's own op (examples/torch_op/swiglu_check.py) on CUDA tensors and under torch.compile"
  python3 examples/torch_op/swiglu_check.py $W/lib/libswiglu_op.so 2>&1 | tee $OUT/swiglu_check.log
  (( PIPESTATUS[0] == 0 )) || fail "examples/torch_op/swiglu_check.py (see $OUT/swiglu_check.log)"
  if [ -f examples/training/gpt.py ] && step training; then
    echo "== examples/training: gpt_train (C++) --compare, f32 and bf16"
    for dt in float32 bfloat16; do
      gpt_train --compare --device cuda --steps 300 --dtype $dt > $OUT/gpt_train_$dt.log 2>&1 \
        || fail "gpt_train --compare --dtype $dt (see $OUT/gpt_train_$dt.log)"
      tail -4 $OUT/gpt_train_$dt.log
    done
    echo "== examples/training/gpt.py --compare, --cuda-graph, --bench"
    python3 examples/training/gpt.py --lib $TLIB --device cuda --compare --steps 300 > $OUT/gpt_compare.log 2>&1 \
      || fail "gpt.py --compare (see $OUT/gpt_compare.log)"
    tail -5 $OUT/gpt_compare.log
    python3 examples/training/gpt.py --lib $TLIB --device cuda --cuda-graph --steps 300 --dropout 0 > $OUT/gpt_graph.log 2>&1 \
      || fail "gpt.py --cuda-graph (see $OUT/gpt_graph.log)"
    tail -5 $OUT/gpt_graph.log
    python3 examples/training/gpt.py --lib $TLIB --device cuda --bench --cuda-graph > $OUT/gpt_bench.log 2>&1 \
      || fail "gpt.py --bench (see $OUT/gpt_bench.log)"
    tail -12 $OUT/gpt_bench.log
  fi
  echo "== registers and spills of the ops' kernels (TESSERA_DUMP=resources)"
  python3 tests/bench/torch_ops_resources.py --lib $TLIB 2>&1 | grep -E "^==|tessera_torch" | tee $OUT/torch_resources.log
  echo "== tests/bench/torch_ops_bench.py: tessera against torch eager and torch.compile"
  python3 tests/bench/torch_ops_bench.py --lib $TLIB ${TORCH_BENCH_ARGS:-} > $OUT/torch_bench.log 2>&1 \
    || fail "tests/bench/torch_ops_bench.py (see $OUT/torch_bench.log)"
  tail -30 $OUT/torch_bench.log
  echo "== tests/bench/torch_matmul_bench.py: tessera::matmul against torch.matmul (cuBLAS) and torch.compile"
  python3 tests/bench/torch_matmul_bench.py --lib $TLIB > $OUT/torch_matmul_bench.log 2>&1 \
    || fail "tests/bench/torch_matmul_bench.py (see $OUT/torch_matmul_bench.log)"
  tail -8 $OUT/torch_matmul_bench.log
  echo "== tests/bench/torch_attention_bench.py: tessera::attention against SDPA, forward and backward"
  python3 tests/bench/torch_attention_bench.py --lib $TLIB ${ATTENTION_BENCH_ARGS:-} > $OUT/torch_attention_bench.log 2>&1 \
    || fail "tests/bench/torch_attention_bench.py (see $OUT/torch_attention_bench.log)"
  tail -18 $OUT/torch_attention_bench.log
else
  tail -30 $OUT/torch_build.log
  fail "tests/gpu/build_torch_ops.sh (see $OUT/torch_build.log)"
fi
fi

if step sanitize; then
echo "== compute-sanitizer (memcheck, racecheck, synccheck) over every example and GPU test binary"
if command -v compute-sanitizer > /dev/null; then
  bash tests/gpu/sanitize_gpu.sh /tmp/tessera-sanitize || fail "compute-sanitizer: see the lines above (logs in $OUT/sanitize.tar.gz)"
  tar -C /tmp -czf $OUT/sanitize.tar.gz tessera-sanitize
else
  SKIPPED+=("compute-sanitizer (not installed)")
  echo "SKIPPED: compute-sanitizer not found"
fi
fi

if step matmul || step matmul_tessera; then
echo "== matmul: tessera (tests/bench/bench_matmul.cpp), then Triton 3.6 and cuBLAS (tests/bench/matmul_ref.py)"
export CUDA_CACHE_DISABLE=1
TESSERA_CACHE_DIR=$(mktemp -d) tessera_bench_matmul compile 2>&1 | tee $OUT/matmul_compile.log
(( PIPESTATUS[0] == 0 )) || fail "tessera_bench_matmul compile (see $OUT/matmul_compile.log)"
tessera_bench_matmul 2>&1 | tee $OUT/matmul_tessera.log
(( PIPESTATUS[0] == 0 )) || fail "tessera_bench_matmul (see $OUT/matmul_tessera.log)"
if step matmul; then
  python3 tests/bench/matmul_ref.py 2>&1 | tee $OUT/matmul_triton.log
  (( PIPESTATUS[0] == 0 )) || fail "tests/bench/matmul_ref.py (see $OUT/matmul_triton.log)"
fi
grep -h BEST $OUT/matmul_tessera.log $OUT/matmul_triton.log 2>/dev/null
fi

if step attention; then
echo "== attention: tessera (tests/bench/bench_attention.cpp), then SDPA and Triton 3.6 (tests/bench/attention_ref.py)"
tessera_bench_attention 2>&1 | tee $OUT/attention_tessera.log
(( PIPESTATUS[0] == 0 )) || fail "tessera_bench_attention (see $OUT/attention_tessera.log)"
python3 tests/bench/attention_ref.py 2>&1 | tee $OUT/attention_ref.log
(( PIPESTATUS[0] == 0 )) || fail "tests/bench/attention_ref.py (see $OUT/attention_ref.log)"
grep -h "BEST\|^sdpa" $OUT/attention_tessera.log $OUT/attention_ref.log 2>/dev/null
fi

if step bench; then
echo "== benchmarks"
export CUDA_CACHE_DISABLE=1
# A benchmark program: its JSON lines go to a file (its other output too, unless errlog differs),
# a failure is recorded.
bench() {  # jsonl errlog label command...
  local out=$1 err=$2 label=$3; shift 3
  if [ "$out" = "$err" ]; then "$@" >> "$out" 2>&1; else "$@" >> "$out" 2>> "$err"; fi
  local rc=$?
  (( rc == 0 )) || fail "$label (exit $rc), see $err"
}
# Two rounds (ROUNDS), alternating tessera and Triton, so that clock or thermal drift during the
# run falls on both sides alike; compare.py keeps each side's best.
: > $OUT/bench_tessera.jsonl; : > $OUT/bench_triton.jsonl
T=$OUT/bench_tessera.jsonl; P=$OUT/bench_triton.jsonl
for round in $(seq 1 ${ROUNDS:-2}); do
  bench $T $T "tessera_bench all, round $round" tessera_bench all
  bench $P $P "tests/bench/triton_ref.py all, round $round" python3 tests/bench/triton_ref.py all
done
# Cold first calls (empty caches), then disk hits (a fresh process, the cache the cold one filled).
for k in vector_add layer_norm; do
  for i in 1 2 3; do
    export TESSERA_CACHE_DIR=$(mktemp -d)
    bench $T $T "tessera_bench first_call $k (cold)" tessera_bench first_call $k
    bench $T $T "tessera_bench first_call $k (disk)" tessera_bench first_call $k
    export TRITON_CACHE_DIR=$(mktemp -d)
    bench $P $P "triton_ref.py first_call $k first_call" python3 tests/bench/triton_ref.py first_call $k first_call
    bench $P $P "triton_ref.py first_call $k disk_hit" python3 tests/bench/triton_ref.py first_call $k disk_hit
  done
done
unset TESSERA_CACHE_DIR TRITON_CACHE_DIR
# Autotuning 8 configs, cold and from the disk (each script uses fresh cache folders).
export TESSERA_CACHE_DIR=$(mktemp -d)
bench $T $OUT/autotune.log "tessera_bench_autotune" tessera_bench_autotune
bench $P $OUT/autotune.log "tests/bench/triton_autotune.py" python3 tests/bench/triton_autotune.py
unset TESSERA_CACHE_DIR
grep -v '^{' $OUT/bench_tessera.jsonl $OUT/bench_triton.jsonl | head -20
python3 tests/bench/compare.py $OUT/bench_tessera.jsonl $OUT/bench_triton.jsonl | tee $OUT/table.txt
(( PIPESTATUS[0] == 0 )) || fail "tests/bench/compare.py"
fi

echo
for s in "${SKIPPED[@]}"; do echo "SKIPPED: $s"; done
if (( ${#FAILED[@]} > 0 )); then
  echo "== ${#FAILED[@]} step(s) FAILED:"
  printf '  %s\n' "${FAILED[@]}" | tee $OUT/failed.txt
  exit 1
fi
echo "== every step passed"

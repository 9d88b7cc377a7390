#!/usr/bin/env bash
# Runs on the GPU machine after tests/gpu/pack.sh (and tests/gpu/build_torch_ops.sh, which it runs
# when libtessera_torch.so is missing): Nsight Compute on the forward kernels of tessera's PyTorch
# ops at tests/bench/torch_ops_bench.py's shapes (fp16 32768x4096; cross-entropy 8192x32768), for
# the bandwidth-ceiling work of notes/training.md: DRAM throughput, occupancy, warp stall reasons,
# and each kernel's SASS, so that what separates softmax (0.97 of copy) from layer norm (0.81) can
# be read rather than guessed.
#   bash tests/gpu/profile_torch_ops.sh [OP...]   (default: softmax layer_norm rms_norm bias_gelu dropout cross_entropy)
# Writes $OUT/ncu_torch_OP.txt and $OUT/torch_OP.sass; prints a short summary per op.
set -uo pipefail
OUT=${OUT:-/tmp/tessera-out}; mkdir -p "$OUT"
OPS=("${@:-softmax layer_norm rms_norm bias_gelu dropout cross_entropy}")
read -r -a OPS <<< "${OPS[*]}"
W=/tmp/tessera-pack
if [ ! -d $W/bin ]; then mkdir -p $W && tar -C $W -xJf .pack/tessera.tar.xz; fi
export LD_LIBRARY_PATH=$W/lib:${LD_LIBRARY_PATH:-} PATH=$W/bin:/usr/local/cuda/bin:$PATH
[ -f $W/lib/libtessera_torch.so ] || bash tests/gpu/build_torch_ops.sh > $OUT/torch_build.log 2>&1 || { echo "build failed: $OUT/torch_build.log"; exit 1; }
NCU_SECTIONS=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
              --section MemoryWorkloadAnalysis
              --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio")
DRIVER=$(mktemp --suffix .py)
cat > $DRIVER <<'PY'
import sys, torch
torch.ops.load_library(sys.argv[1])
op, t = sys.argv[2], torch.ops.tessera
dev, f16 = "cuda", torch.float16
x = torch.randn(32768, 4096, device=dev, dtype=f16)
w = torch.randn(4096, device=dev, dtype=f16)
run = {
    "softmax": lambda: t.softmax(x, -1),
    "layer_norm": lambda: t.layer_norm(x, w, w, 1e-5),
    "rms_norm": lambda: t.rms_norm(x, w, 1e-6),
    "bias_gelu": lambda: t.bias_gelu(x, w),
    "dropout": lambda: t.dropout(x, 0.1, 1234),
}
if op == "cross_entropy":
    logits = torch.randn(8192, 32768, device=dev, dtype=f16)
    target = torch.randint(0, 32768, (8192,), device=dev)
    run["cross_entropy"] = lambda: t.cross_entropy(logits, target, -100)
with torch.no_grad():
    for _ in range(3):
        run[op]()
torch.cuda.synchronize()
PY
for op in "${OPS[@]}"; do
  kname="tessera_torch_${op}_"
  case $op in softmax|layer_norm|rms_norm|bias_gelu|cross_entropy) kname="tessera_torch_${op}_fwd_f16" ;; dropout) kname="tessera_torch_dropout_f16" ;; esac
  export TESSERA_CACHE_DIR=$(mktemp -d)
  ncu "${NCU_SECTIONS[@]}" -k "regex:$kname" --launch-skip 2 --launch-count 1 \
    python3 $DRIVER $W/lib/libtessera_torch.so $op > $OUT/ncu_torch_$op.txt 2>&1 || echo "ncu $op failed (see $OUT/ncu_torch_$op.txt)"
  # SASS of the kernel as the JIT assembled it (TESSERA_DUMP=ptx, then ptxas as the JIT runs it).
  D=$(mktemp -d)
  TESSERA_CACHE_DIR=$(mktemp -d) TESSERA_DUMP=ptx python3 $DRIVER $W/lib/libtessera_torch.so $op 2> $D/dump.txt > /dev/null
  awk '/^\/\/ ----- tessera: PTX of kernel/{n++} n==1 && !/^\/\/ ----- tessera/' $D/dump.txt > $D/k.ptx
  ptxas -arch=sm_90a -o $D/k.cubin $D/k.ptx 2> /dev/null && cuobjdump -sass $D/k.cubin > $OUT/torch_$op.sass
  S=$OUT/torch_$op.sass
  echo "== $op ($kname): $( [ -f $S ] && grep -cE '^\s+/\*[0-9a-f]{4}\*/' $S) SASS instructions;" \
       "LDG $( [ -f $S ] && grep -c 'LDG' $S), STG $( [ -f $S ] && grep -c 'STG' $S), BAR $( [ -f $S ] && grep -c 'BAR' $S), MUFU $( [ -f $S ] && grep -c 'MUFU' $S)"
  grep -E "^\s+(Duration|DRAM Throughput|Memory Throughput|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Block Limit Registers|Warp Cycles Per Issued Instruction|Eligible Warps Per Scheduler|Issue Slots Busy)" $OUT/ncu_torch_$op.txt | head -12
  echo "  stalls per issued instruction (> 0.2):" $(grep -E "stalled_.*_per_issue_active" $OUT/ncu_torch_$op.txt |
    awk '$NF + 0 > 0.2 {sub("smsp__average_warps_issue_stalled_", "", $1); sub("_per_issue_active.ratio", "", $1); print $1 "=" $NF}')
done
rm -f $DRIVER

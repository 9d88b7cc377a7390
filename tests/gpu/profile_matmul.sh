#!/usr/bin/env bash
# Runs on the GPU machine after tests/gpu/pack.sh: profiles one matmul shape and configuration,
# tessera's kernel and Triton's tutorial kernel side by side, with Nsight Compute (speed of light,
# occupancy, warp states, memory) and keeps both kernels' SASS, so that where the two differ can be
# read rather than guessed. Default: bf16 8192x8192x512, 128x256x64, 8 warps, 3 stages.
#   bash tests/gpu/profile_matmul.sh [DTYPE M N K BM BN BK WARPS STAGES [LAYOUT]]   (LAYOUT: nn, tn, nt, tt)
# Writes $OUT/ncu_{tessera,triton}_TAG.txt, $OUT/{tessera,triton}_TAG.sass and .liveness (register
# life ranges, nvdisasm) (TAG: the arguments joined by '_'); prints a short comparison.
set -uo pipefail
OUT=${OUT:-/tmp/tessera-out}; mkdir -p "$OUT"
ARGS=("${@:-bf16 8192 8192 512 128 256 64 8 3}")
read -r -a ARGS <<< "${ARGS[*]}"
TAG=$(IFS=_; echo "${ARGS[*]}")
W=/tmp/tessera-pack
if [ ! -d $W/bin ]; then mkdir -p $W && tar -C $W -xJf .pack/tessera.tar.xz; fi
export LD_LIBRARY_PATH=$W/lib:${LD_LIBRARY_PATH:-} PATH=$W/bin:/usr/local/cuda/bin:$PATH
NCU_SECTIONS=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
              --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis
              --section MemoryWorkloadAnalysis_Tables
              --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio|lts__t_sectors_srcunit_tex_op_read.sum|l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum|smsp__inst_executed.sum")
# The third launch of each: past the checked first run and a warm-up.
export TESSERA_CACHE_DIR=$(mktemp -d) TRITON_CACHE_DIR=$(mktemp -d)
ncu "${NCU_SECTIONS[@]}" -k regex:matmul --launch-skip 2 --launch-count 1 \
  tessera_bench_matmul one "${ARGS[@]}" > $OUT/ncu_tessera_$TAG.txt 2>&1 || echo "ncu tessera failed (see $OUT/ncu_tessera_$TAG.txt)"
ncu "${NCU_SECTIONS[@]}" -k regex:matmul_kernel --launch-skip 2 --launch-count 1 \
  python3 tests/bench/matmul_ref.py one "${ARGS[@]}" > $OUT/ncu_triton_$TAG.txt 2>&1 || echo "ncu triton failed (see $OUT/ncu_triton_$TAG.txt)"
# SASS: tessera's PTX (TESSERA_DUMP=ptx) assembled as the JIT does; Triton's cubin from its cache.
D=$(mktemp -d)
TESSERA_CACHE_DIR=$(mktemp -d) TESSERA_DUMP=ptx tessera_bench_matmul one "${ARGS[@]}" 2> $D/dump.txt > /dev/null
awk '/^\/\/ ----- tessera: PTX of kernel/{n++} n==1 && !/^\/\/ ----- tessera/' $D/dump.txt > $D/tessera.ptx
ptxas -arch=sm_90a -o $D/tessera.cubin $D/tessera.ptx && cuobjdump -sass $D/tessera.cubin > $OUT/tessera_$TAG.sass
cuobjdump -sass "$(find $TRITON_CACHE_DIR -name '*.cubin' | head -1)" > $OUT/triton_$TAG.sass
# Register life ranges per instruction (where the register peak is, and what is live there).
nvdisasm --print-life-ranges $D/tessera.cubin > $OUT/tessera_$TAG.liveness 2>&1
nvdisasm --print-life-ranges "$(find $TRITON_CACHE_DIR -name '*.cubin' | head -1)" > $OUT/triton_$TAG.liveness 2>&1
for side in tessera triton; do
  S=$OUT/${side}_$TAG.sass
  echo "== $side $TAG: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' $S) SASS instructions;" \
       "STG $(grep -c 'STG' $S), STS $(grep -c 'STS' $S), LDS $(grep -c 'LDS' $S)," \
       "HGMMA $(grep -c 'HGMMA' $S), BAR $(grep -c 'BAR' $S), LDGSTS $(grep -c 'LDGSTS' $S)"
  grep -E "TFLOP/s|^\s+(Duration|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Dynamic Shared Memory Per Block|Issue Slots Busy|No Eligible|Active Warps Per Scheduler|Eligible Warps Per Scheduler|Warp Cycles Per Issued Instruction|L2 Hit Rate|L1/TEX Hit Rate|Executed Ipc Active|Block Limit|lts__t_sectors_srcunit_tex_op_read.sum|l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum|smsp__inst_executed.sum)" $OUT/ncu_${side}_$TAG.txt | head -30
  echo "  stalls per issued instruction (> 0.1):" $(grep -E "stalled_.*_per_issue_active" $OUT/ncu_${side}_$TAG.txt |
    awk '$NF + 0 > 0.1 {sub("smsp__average_warps_issue_stalled_", "", $1); sub("_per_issue_active.ratio", "", $1); print $1 "=" $NF}')
done

#!/usr/bin/env bash
# Runs on the GPU machine after tests/gpu/pack.sh: tessera's matmul and Triton 3.6's tutorial kernel
# side by side, per operand layout (nn; tn: A column-major, the backward's Aᵀ·dC; nt: B
# column-major), shape and configuration, to locate what makes a layout slow (notes/tensor-cores.md,
# "Session 14": tn's cause). Prints one line per (shape, config, layout): TFLOP/s of both.
#   bash tests/gpu/layout_probe.sh
set -uo pipefail
OUT=${OUT:-/tmp/tessera-out}; mkdir -p "$OUT"
W=/tmp/tessera-pack
if [ ! -d $W/bin ]; then mkdir -p $W && tar -C $W -xJf .pack/tessera.tar.xz; fi
export LD_LIBRARY_PATH=$W/lib:${LD_LIBRARY_PATH:-} PATH=$W/bin:/usr/local/cuda/bin:$PATH
export TESSERA_CACHE_DIR=$(mktemp -d) TRITON_CACHE_DIR=$(mktemp -d)
SHAPES=${SHAPES:-"4096 4096 4096;2048 2048 2048;1024 1024 16384;16384 1024 1024"}
CONFIGS=${CONFIGS:-"128 256 64 8 3;128 128 32 4 4"}
LAYOUTS=${LAYOUTS:-"nn tn nt"}
printf '%-18s %-16s %-6s %10s %10s\n' shape config layout tessera triton | tee $OUT/layout_probe.txt
IFS=';' read -r -a shapes <<< "$SHAPES"
IFS=';' read -r -a configs <<< "$CONFIGS"
for sh in "${shapes[@]}"; do
  for cf in "${configs[@]}"; do
    for lay in $LAYOUTS; do
      # shellcheck disable=SC2086
      t=$(tessera_bench_matmul one bf16 $sh $cf $lay 2>&1 | tee -a $OUT/layout_probe.log | awk '/^BEST/ {print $(NF-2)}')
      # shellcheck disable=SC2086
      p=$(python3 tests/bench/matmul_ref.py one bf16 $sh $cf $lay 2>&1 | tee -a $OUT/layout_probe.log | awk '/^BEST/ {for (i=1;i<=NF;i++) if ($i=="TFLOP/s;") print $(i-1)}')
      printf '%-18s %-16s %-6s %10s %10s\n' "${sh// /x}" "${cf// /x}" "$lay" "${t:-?}" "${p:-?}" | tee -a $OUT/layout_probe.txt
    done
  done
done

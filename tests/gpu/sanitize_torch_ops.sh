#!/usr/bin/env bash
# On the GPU machine, after tests/gpu/build_torch_ops.sh: tests/torch/ops_check.py on CUDA tensors
# under compute-sanitizer's memcheck and racecheck at once, instrumenting tessera's kernels only
# (their names start with tessera_; torch's own kernels run uninstrumented), with PyTorch's caching
# allocator off so that an access past a tensor is past its allocation. Exits non-zero when a
# tool reports an error or ops_check fails. TOOLS picks the tools (default "memcheck racecheck";
# synccheck is the third), each run beside the others; racecheck needs about 300 s on an H100.
#   bash tests/gpu/sanitize_torch_ops.sh LIBTESSERA_TORCH [LOG_DIR]
set -uo pipefail
LIB=$1; LOG=${2:-/tmp/tessera-sanitize-torch}; mkdir -p "$LOG"
export PYTORCH_NO_CUDA_MEMORY_CACHING=1
TOOLS=${TOOLS:-memcheck racecheck}
for tool in $TOOLS; do
  ( timeout ${SANITIZE_TIMEOUT:-400} compute-sanitizer --tool $tool --kernel-regex kns=tessera --error-exitcode 99 \
      python3 "$(dirname "$0")/../torch/ops_check.py" --lib "$LIB" --device cuda > "$LOG/$tool.log" 2>&1
    echo $? > "$LOG/$tool.rc" ) &
done
wait
status=0
for tool in $TOOLS; do
  rc=$(cat "$LOG/$tool.rc")
  printf '%-10s rc=%-3s %s | %s\n' $tool "$rc" "$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY" "$LOG/$tool.log" | tail -1)" \
    "$(grep "ops_check: .* checks" "$LOG/$tool.log")"
  [ "$rc" = 0 ] || status=1
done
exit $status

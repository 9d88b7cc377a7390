#!/usr/bin/env bash
# An A/B of the PyTorch ops' kernels on the GPU machine, in the repository root, after
# tests/gpu/pack.sh ran here. OLD is a tar of the files that make the "old" side, unpacked over a
# copy of this tree (e.g. `git archive <commit> dsl/torch examples/attention_kernels.hpp > .pack/old.tar`);
# both sides are built on the device (tests/gpu/build_torch_ops.sh) against this tree's libtessera.
# Steps by priority, each gated on the seconds left of TB (default 585: a device call's 10 minutes):
# tessera_gpu_tests "[math]" and ops_check.py on CUDA for the new side (correctness first), one
# round of torch_ops_bench.py --tessera-only per side, the full torch_ops_bench.py (eager and
# torch.compile beside the new side), torch_attention_bench.py per side, a second A/B round.
# ONLY_ON=H200 exits at once (status 0) where the card's name lacks that word: a call that may be
# given either card then costs nothing where it gets the other. CHECKS=0 skips the two
# correctness steps (where the same tree passed them on another call).
# OLD_LIB=.pack/oldlib.tar.xz gives the old side its own libtessera.so.0 (a tar.xz of that one
# file, stripped: an A/B of the compiler rather than of the ops' source; build it here at the old
# commit's jit/ and backends/, `strip --strip-unneeded`, `tar -cJf`); each side's runs then load
# their own library, and each side keeps its own kernel cache.
# AB_OPS=softmax,cross_entropy times only those ops in the A/B rounds; ROUNDS_ONLY=1 runs the A/B
# rounds alone (no full bench, no attention bench): a variant's round then costs about a minute.
# Usage: TB=SECONDS bash tests/gpu/ab_torch_ops.sh .pack/old.tar   (logs in $OUT; the A/B rounds in $OUT/ab.log)
set -u
OLD_TAR=${1:?usage: ab_torch_ops.sh OLD.tar}
OUT=${OUT:-/tmp/tessera-out}; mkdir -p "$OUT"
W=/tmp/tessera-pack; rm -rf $W; mkdir -p $W && tar -C $W -xJf .pack/tessera.tar.xz
export LD_LIBRARY_PATH=$W/lib PATH=$W/bin:$PATH TESSERA_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
if [ -n "${ONLY_ON:-}" ] && ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q "$ONLY_ON"; then
  echo "not an $ONLY_ON: nothing run"; exit 0
fi
t0=$(date +%s); TB=${TB:-585}; left() { echo $(( TB - ($(date +%s) - t0) )); }
A=/tmp/ab-old; rm -rf $A; mkdir -p $A; cp -r dsl tests examples $A/; tar -C $A -xf "$OLD_TAR"
AW=/tmp/ab-oldW; rm -rf $AW; mkdir -p $AW/lib
if [ -n "${OLD_LIB:-}" ]; then tar -C $AW/lib -xJf "$OLD_LIB" libtessera.so.0; else cp -a $W/lib/libtessera.so* $AW/lib/; fi
(cd $A && W=$AW timeout 200 bash tests/gpu/build_torch_ops.sh > $OUT/old_build.log 2>&1) & oldpid=$!
timeout 200 bash tests/gpu/build_torch_ops.sh > $OUT/torch_build.log 2>&1 || { echo "BUILD FAILED"; tail -20 $OUT/torch_build.log; }
L=$W/lib/libtessera_torch.so; O=$AW/lib/libtessera_torch.so
if [ "${CHECKS:-1}" != 0 ]; then
  timeout 60 tessera_gpu_tests "[math]" > $OUT/math.log 2>&1; echo "gpu [math] rc $?"; tail -2 $OUT/math.log
  timeout 100 python3 tests/torch/ops_check.py --lib $L --device cuda > $OUT/ops_check.log 2>&1; echo "ops_check rc $?"; tail -2 $OUT/ops_check.log
fi
wait $oldpid || { echo "OLD BUILD FAILED"; tail -5 $OUT/old_build.log; }
echo "checked at $(( $(date +%s) - t0 )) s"
# A command run as the side of libtessera_torch.so `lib` (its own libtessera and kernel cache).
as_side() { local lib=$1; shift; LD_LIBRARY_PATH=$(dirname $lib):$W/lib TESSERA_CACHE_DIR=$(dirname $lib)/cache "$@"; }
# One --tessera-only round of a side; every round also goes to $OUT/ab.log, so that a call whose
# printed tail is cut keeps the first rounds.
ab() {
  echo "== $1" | tee -a $OUT/ab.log
  as_side $1 timeout 70 python3 tests/bench/torch_ops_bench.py --lib $1 --tessera-only ${AB_OPS:+--ops $AB_OPS} 2>&1 |
    grep -E "^(layer_norm|rms_norm|softmax|cross_entropy|bias_gelu|dropout|copy) " | tr -s ' ' | tee -a $OUT/ab.log
}
[ $(left) -gt 80 ] && { ab $O; ab $L; }
echo "A/B at $(( $(date +%s) - t0 )) s"
if [ "${ROUNDS_ONLY:-0}" = 0 ] && [ $(left) -gt 100 ]; then
  tb=$(( $(left) - 5 )); [ $tb -gt 200 ] && tb=200
  timeout $tb python3 tests/bench/torch_ops_bench.py --lib $L > $OUT/ops_bench.log 2>&1; echo "ops_bench rc $? at $(( $(date +%s) - t0 )) s"
  grep -v "^ *$" $OUT/ops_bench.log | tail -16
fi
for side in old new; do
  [ $(left) -lt 75 ] || [ "${ROUNDS_ONLY:-0}" != 0 ] && break
  lib=$L; [ $side = old ] && lib=$O
  echo "== attention $side"; as_side $lib timeout 70 python3 tests/bench/torch_attention_bench.py --lib $lib > $OUT/att_$side.log 2>&1
  echo "rc $?"; grep -v "^ *$" $OUT/att_$side.log | tail -6
done
[ $(left) -gt 80 ] && { ab $O; ab $L; }
echo "done at $(( $(date +%s) - t0 )) s"

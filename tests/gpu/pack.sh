#!/usr/bin/env bash
# Packs what the GPU machine needs (it has no LLVM, fmt or Catch2): libtessera.so (static LLVM
# inside), libtessera_host.so (the conformance suite links it for its host executors), the examples, the GPU tests (tessera_gpu_tests, tessera_random_gpu_tests), the
# conformance suite (run there on the GPU) and the
# benchmarks, into .pack/ (git-ignored); tests/gpu/device_run.sh runs them there.
set -euo pipefail
cd "$(dirname "$0")/../.."
targets="tessera tessera_host tessera_gpu_tests tessera_conformance_tests tessera_bench tessera_bench_autotune tessera_bench_matmul tessera_bench_attention tessera-cache matmul matmul_fused attention attention_bwd vector_add fused_elu broadcast_2d softmax layer_norm layer_norm_bwd rms_norm_bwd online_softmax"
# The random-programs GPU tests, where this tree builds them (tests/gpu/CMakeLists.txt).
if cmake --build build --target help 2>/dev/null | grep -qw tessera_random_gpu_tests; then
  targets="$targets tessera_random_gpu_tests"
fi
cmake --build build --target $targets
rm -rf .pack && mkdir -p .pack/stage/bin .pack/stage/lib
cp build/libtessera.so.0 .pack/stage/lib/ 2>/dev/null || cp build/libtessera.so* .pack/stage/lib/
cp -L build/libtessera_host.so.0 .pack/stage/lib/
for b in tessera_gpu_tests tests/gpu/tessera_gpu_tests tests/tessera_conformance_tests tests/gpu/tessera_random_gpu_tests tests/bench/tessera_bench tests/bench/tessera_bench_autotune tests/bench/tessera_bench_matmul tests/bench/tessera_bench_attention tessera-cache examples/matmul examples/matmul_fused examples/attention examples/attention_bwd examples/vector_add examples/fused_elu examples/broadcast_2d examples/softmax examples/layer_norm examples/layer_norm_bwd examples/rms_norm_bwd examples/online_softmax; do
  [ -f build/$b ] && cp build/$b .pack/stage/bin/
done
strip --strip-unneeded .pack/stage/lib/* .pack/stage/bin/*
tar -C .pack/stage -cJf .pack/tessera.tar.xz .
rm -rf .pack/stage
ls -la .pack

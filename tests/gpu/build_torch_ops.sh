#!/usr/bin/env bash
# Builds libtessera_torch.so (dsl/torch/, the tessera::* PyTorch ops) on the GPU machine, against
# the PyTorch installed there (2.x with CUDA, so that the ops run on PyTorch's current stream) and
# the libtessera.so that tests/gpu/pack.sh packed (that machine has no LLVM, so the CMake build
# cannot run there). Writes $W/lib/libtessera_torch.so, $W/bin/gpt_train and
# $W/lib/libswiglu_op.so (examples/torch_op) (W: where device_run.sh unpacked the pack).
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${W:-/tmp/tessera-pack}
[ -f $W/lib/libtessera.so.0 ] || { echo "no $W/lib/libtessera.so.0: unpack .pack/tessera.tar.xz first" >&2; exit 1; }
ln -sf libtessera.so.0 $W/lib/libtessera.so
eval "$(python3 - <<'PY'
import os, torch
from torch.utils import cpp_extension as ce
try:
    inc = ce.include_paths(device_type="cuda")
except TypeError:
    inc = ce.include_paths(cuda=True)
print("TORCH_INCLUDES='%s'" % " ".join("-isystem " + p for p in inc))
print("TORCH_LIBDIR='%s'" % os.path.join(os.path.dirname(torch.__file__), "lib"))
print("TORCH_ABI=%d" % int(torch._C._GLIBCXX_USE_CXX11_ABI))
PY
)"
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
OBJ=$(mktemp -d)
FLAGS="-std=c++20 -O2 -fPIC -fvisibility=hidden -fvisibility-inlines-hidden -D_GLIBCXX_USE_CXX11_ABI=$TORCH_ABI -DTESSERA_TORCH_CUDA -I. -Idsl/include $TORCH_INCLUDES -isystem $CUDA_INC"
ls dsl/torch/*.cpp | xargs -P "$(nproc)" -I{} sh -c 'g++ '"$FLAGS"' -c {} -o '"$OBJ"'/$(basename {} .cpp).o'
g++ -shared -o $W/lib/libtessera_torch.so $OBJ/*.o -L$W/lib -ltessera -L"$TORCH_LIBDIR" -ltorch -ltorch_cpu -ltorch_cuda -lc10 -lc10_cuda \
  -Wl,-rpath,$W/lib -Wl,-rpath,"$TORCH_LIBDIR"
rm -rf $OBJ
echo "built $W/lib/libtessera_torch.so"
# The C++ training run (examples/training/gpt.cpp) against the same PyTorch.
mkdir -p $W/bin
g++ $FLAGS examples/training/gpt.cpp -o $W/bin/gpt_train -L$W/lib -ltessera_torch -ltessera -L"$TORCH_LIBDIR" \
  -ltorch -ltorch_cpu -ltorch_cuda -lc10 -lc10_cuda -Wl,-rpath,$W/lib -Wl,-rpath,"$TORCH_LIBDIR"
echo "built $W/bin/gpt_train"
# A user's own op (examples/torch_op): the library that Python loads.
g++ $FLAGS -shared examples/torch_op/swiglu_op.cpp -o $W/lib/libswiglu_op.so -L$W/lib -ltessera -L"$TORCH_LIBDIR" \
  -ltorch -ltorch_cpu -ltorch_cuda -lc10 -lc10_cuda -Wl,-rpath,$W/lib -Wl,-rpath,"$TORCH_LIBDIR"
echo "built $W/lib/libswiglu_op.so"

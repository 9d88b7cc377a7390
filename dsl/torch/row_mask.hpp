// The mask of a row kernel's lanes (the norm and softmax ops' kernels: one row, or a block of a
// row, a program, read as arange(0, BLOCK)).
#pragma once
#include <tessera/tessera.hpp>

namespace tessera::torch_ops {

namespace ts = ::tessera;

// `cols < n` for a program's columns cols = base + arange(0, BLOCK); or, where the launch says
// that no block of the row is partial (meta EVEN = 1: n a multiple of BLOCK, common.hpp's
// row_meta), a mask the compiler folds to true (arange(0, BLOCK) < BLOCK): no compare or select
// an element and no predicate on the loads and stores (layer norm forward, fp16, n = 4096:
// 344 -> 288 SASS instructions a thread on sm_90a).
inline ts::Mask row_mask(const ts::Int& cols, const ts::Int& n) {
  if (ts::meta("EVEN") == 0) return cols < n;
  const int block = static_cast<int>(ts::meta("BLOCK"));
  return ts::arange(0, block) < block;
}

}  // namespace tessera::torch_ops

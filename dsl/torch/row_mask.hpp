// Masks of a program's lanes that fold away where the launch says no tile is partial: the row
// kernels (norms, softmax: one row, or a block of a row, a program, read as arange(0, BLOCK)),
// bias+GELU's [BLOCK_M, BLOCK_N] tiles and dropout's flat blocks.
#pragma once
#include <tessera/tessera.hpp>

#include <string_view>

namespace tessera::torch_ops {

namespace ts = ::tessera;

// `index < bound` for a program's indices index = base + arange(0, extent); or, where meta `flag`
// is 1 (the launch found bound a multiple of extent, so no program's indices pass it), a mask the
// compiler folds to true (arange(0, extent) < extent): no compare or select an element and no
// predicate on the loads and stores (layer norm forward, fp16, n = 4096: 344 -> 288 SASS
// instructions a thread on sm_90a).
inline ts::Mask in_bounds(const ts::Int& index, const ts::Int& bound, int extent, std::string_view flag) {
  if (ts::meta(flag) == 0) return index < bound;
  return ts::arange(0, extent) < extent;
}

// A row kernel's column mask: cols < n, folded where meta EVEN = 1 (common.hpp's row_meta).
inline ts::Mask row_mask(const ts::Int& cols, const ts::Int& n) {
  return in_bounds(cols, n, static_cast<int>(ts::meta("BLOCK")), "EVEN");
}

}  // namespace tessera::torch_ops

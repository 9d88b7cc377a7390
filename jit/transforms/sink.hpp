#pragma once
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// Moves each pure op (no memory access, no regions) whose first user comes after a loop or a
// layout conversion down its block to just before that user, so that its value is not held in
// registers across the loop or the conversion. The layout pass computes a tile's index arithmetic
// in each layout its users need at the place the original was (rematerialization), and a matmul's
// epilogue computes its pointers and mask before the conversion of the accumulator: both would
// hold registers where the accumulator needs them (for a 128 x 256 tile, 16 row indices through
// the K loop, or 16 pointers beside the 128 accumulator registers). Run after the layout pass.
void sink_pure_ops(ir::Module& m);

}  // namespace tessera::transforms

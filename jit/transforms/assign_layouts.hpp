#pragma once
#include "jit/analysis/layouts.hpp"
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// Gives every tile value a layout (ir::Layout) and inserts convert_layout where a use needs the
// value in another layout. Each rank gets one blocked layout, sized from the largest shape of that
// rank and 16-byte vectors of the widest element loaded or stored; a value whose users expand it
// (expand_dims) takes the slice of its user's layout instead, so that broadcasting stays inside
// registers. Layouts are decided from the uses back to the definitions (a value takes the layout
// its last user asks for); loop-carried values and if results keep the blocked default.
// On a target with wgmma, dots that can use it are marked "wgmma" first and take its accumulator
// layout. Last, the shared buffers that dots read get their encodings (shared_encodings.hpp).
void assign_layouts(ir::Module& m, const analysis::TargetInfo& target);

}  // namespace tessera::transforms

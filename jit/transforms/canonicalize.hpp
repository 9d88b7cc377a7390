#pragma once
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// Local simplifications, repeated until nothing changes, then removal of the pure ops they left
// unused (for/if ops are left to dce):
// - constant folding of scalar and splat (tile) constants through arithmetic, compare, neg/not/abs,
//   cast and select, with the exact semantics of ops.def (fold.hpp; integers wrap);
// - integer identities x+0, x-0, x*1, x|0, x^0, x<<0, x>>0, x&~0 -> x; x*0, x&0 -> 0; x|~0 -> ~0;
// - select with a constant condition or equal branches; splat/broadcast/expand_dims/convert_layout
//   of a constant -> a constant tile; broadcast of a broadcast or a splat -> one op; no-op
//   broadcast/convert_layout -> the operand;
// - if with a constant condition -> the taken region's ops, inlined in place.
void canonicalize(ir::Module& m);

}  // namespace tessera::transforms

#pragma once
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// Common-subexpression elimination: a pure op (no regions; not load, store, yield or return)
// equal to an earlier op that dominates it — same kind, operands (in either order for commutative
// ops), attributes and result types — is replaced by that op's results. An op inside a region
// may reuse one from an enclosing block, never one from a sibling region. program_id and
// num_programs are pure and merge; loads never do (a store may come between them).
void cse(ir::Module& m);

}  // namespace tessera::transforms

#pragma once
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// Moves each load (with the address, mask and `other` computations it needs) up its block to just
// after the last op it depends on, the last earlier load, or the last op that may write memory (store, atomic, or a
// for/if/reduce/scan holding one), so that its latency overlaps the work before it. A reduction
// ends in barriers that ptxas does not schedule across: a load written after a reduction (the
// weights of a norm) otherwise waits for it. Loads never move across writes, so aliasing cannot
// change what they read.
void hoist_loads(ir::Module& m);

}  // namespace tessera::transforms

#pragma once
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// Dead-code elimination: removes ops whose results are all unused and that have no side effect,
// repeatedly, inside regions too. store, return and yield always stay; a for or if stays while
// one of its results is used or its regions contain a store (unused results of a live for/if are
// kept: dropping them would change the yields). Unused loads are removed.
void dce(ir::Module& m);

}  // namespace tessera::transforms

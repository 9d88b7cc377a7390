#include "jit/transforms/dce.hpp"

#include "jit/transforms/rewrite.hpp"

namespace tessera::transforms {

void dce(ir::Module& m) { erase_dead_ops(m, /*include_region_ops=*/true); }

}  // namespace tessera::transforms

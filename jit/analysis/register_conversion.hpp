// A convert_layout that is only a renaming of registers, read off the two layouts as linear
// layouts (linear_layout.hpp, plan_conversion): every element a thread holds in the destination
// layout is already in one of its own registers in the source layout (a slice of a 2-D layout to
// the 1-D layout of the same threads, a change of the register order). It costs no instruction
// and no shared memory; other conversions go through shared memory (lower_convert_layout;
// shared_memory.hpp allocates them a region). Conversions within a warp by shuffles are not done:
// none of the layout pairs the layout pass makes needs one (measured over ctest's kernels).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "jit/ir/types.hpp"

namespace tessera::analysis {

// For each destination register (Distribution slot), the source register of the same thread that
// holds its element; nullopt where some element must come from another thread. Both types are
// tiles of one shape with blocked or slice layouts (else nullopt).
std::optional<std::vector<std::int64_t>> register_renaming(const ir::Type& src, const ir::Type& dst);

}  // namespace tessera::analysis

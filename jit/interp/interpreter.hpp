// The reference interpreter: runs a tile-IR module on host memory over a whole grid.
//
// It is the default executor without a GPU, the oracle of the CI tests, and the check that a pass
// preserves meaning. Semantics match the GPU: masked lanes are never touched (a masked load yields
// `other`, or zero when absent), integers wrap in two's complement, float math is done in the
// element type (f16/bf16 round after every op as the device does).
#pragma once
#include <cstddef>
#include <span>
#include <vector>

#include "jit/ir/ir.hpp"
#include "tessera/args.hpp"

namespace tessera::interp {

// A host buffer the program may touch. A pointer argument with ArgValue::bytes > 0 is registered
// automatically; an unmasked access outside every registered buffer that overlaps a known pointer
// argument's range is a MemoryAccessError naming the op's source line.
struct HostBuffer { const void* base; std::size_t bytes; };

void run(const ir::Module& m, Dim3 grid, std::span<const ArgValue> args,
         std::span<const HostBuffer> extra_buffers = {});

}  // namespace tessera::interp

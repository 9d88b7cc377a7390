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
// automatically; `extra_buffers` adds others (memory a raw pointer argument reaches).
struct HostBuffer { const void* base; std::size_t bytes; };

// Runs the module once per program of `grid` (x fastest), op by op on whole tiles.
// For every active (unmasked) lane of a load or store, a MemoryAccessError naming the op's source
// line is thrown when the address is null, is not a multiple of the element size, straddles the
// end of a registered buffer, or — once some pointer argument has a known size — lies outside
// every registered buffer. With no sized pointer argument, accesses elsewhere are the caller's
// responsibility. A wrong argument count or kind (pointer / int / float) is a LaunchError; IR the
// interpreter cannot execute is an InternalError; a for loop with step 0 that would run is a
// ProgramError.
void run(const ir::Module& m, Dim3 grid, std::span<const ArgValue> args,
         std::span<const HostBuffer> extra_buffers = {});

}  // namespace tessera::interp

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

// A host buffer the program may touch. A sized pointer argument (ArgValue::sized) is registered
// automatically; `extra_buffers` adds others (memory a raw pointer argument reaches).
struct HostBuffer { const void* base; std::size_t bytes; };

// Runs the module once per program of `grid` (x fastest), op by op on whole tiles.
// For every active (unmasked) lane of a load or store, a MemoryAccessError naming the op's source
// line is thrown when the address is null, is not a multiple of the element size, or is out of
// bounds: a pointer derived from a sized argument must stay in that argument's buffer (and the
// report names it); one derived from a raw pointer argument is the caller's responsibility unless
// extra buffers are given; one of mixed origin must lie in some registered buffer. Two programs
// touching one byte of a sized buffer without an atomic (both writing, or one writing where
// another reads) is a MemoryAccessError naming both programs and source lines (races.hpp).
// A wrong argument count or kind (pointer / int / float) is a LaunchError; IR the interpreter
// cannot execute is an InternalError; a for loop with step 0 is a ProgramError; running out of
// host memory is a tessera::Error.
void run(const ir::Module& m, Dim3 grid, std::span<const ArgValue> args,
         std::span<const HostBuffer> extra_buffers = {});

}  // namespace tessera::interp

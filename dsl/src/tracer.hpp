// The tracer's entry point for the runtime (internal to the library).
#pragma once
#include <memory>
#include <vector>

#include "jit/ir/ir.hpp"
#include "tessera/launch.hpp"

namespace tessera {

// Runs the kernel body of `def` on symbolic arguments and returns its tile-IR module: one block
// argument per kernel argument (named arg0, arg1, ...), the given facts and num_warps, ending in
// `return`. Throws ProgramError (naming the user's line) for a program that cannot be traced.
std::unique_ptr<ir::Module> trace_kernel(const detail::KernelDef& def, const MetaValues& meta,
                                         const std::vector<ir::ArgFacts>& facts, int num_warps);

}  // namespace tessera

// Random programs on the host targets: the generated code itself, run on this CPU.
#pragma once
#include <string>

#include "random_harness.hpp"

namespace tessera::random_program {

// Compiles `p` (a GPU-mode program) as a launch on Executor::Host ("host", warps of 32) or
// Executor::Host64 ("host64", warps of 64) builds it (the default pipeline, runtime::codegen: the
// layouts, expand-conversions, place-barriers, the lowering the GPU targets share), runs it over
// its grid with the inputs of its seed and poisoned outputs on the host executor (one fiber per
// thread; a barrier is a rendezvous, so a missing one between a store and another thread's load
// reads stale bytes), and compares with the interpreter as the GPU test does (compare_close).
// Returns "" when they match, else what differed; kNotRunPrefix + why for a program it does not run.
std::string run_on_host(const Program& p, const std::string& target);
inline const std::string kNotRunPrefix = "not run: ";

}  // namespace tessera::random_program

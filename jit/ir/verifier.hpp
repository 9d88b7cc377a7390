// Checks that a module is well formed; throws tessera::ProgramError naming the first problem, the
// op's location and its printed form. Passes run it after themselves (transforms/passes.hpp).
//
// Structure: operand/result/region counts per ops.def; operands defined before use and visible
// (structured regions: a region sees its block arguments and everything that dominates its op);
// the kernel body ends in return; regions end in yield; return and yield appear only there.
// Types: one rule per op kind (verifier_rules.cpp), following the semantics in ops.def.
#pragma once
#include <string_view>

#include "jit/ir/ir.hpp"

namespace tessera::ir {

void verify(const Module& m);

// Whether the atomic operation `op` ("add", "max", "min", "and", "or", "xchg", "cas") supports
// elements of type `d` (verifier_atomics.cpp): the one table the verifier and the DSL's checks
// share (the C++ types' static_asserts in tessera/atomics.hpp state it for the compiler).
bool atomic_supports(std::string_view op, DType d);

}  // namespace tessera::ir

// The verifier's type rules, one per op kind, in one switch (verifier_rules.cpp).
// Internal to jit/ir: the public entry point is verify() in verifier.hpp.
#pragma once
#include <string>

#include "jit/ir/ir.hpp"

namespace tessera::ir {

// "" when the op's operand, result and attribute types follow its rule; else the problem.
// Call only after the structural checks passed (counts, non-null operands, region terminators).
std::string type_rule_problem(const Op& op);

// The rule of atomic_rmw / atomic_cas (verifier_atomics.cpp).
std::string atomic_rule_problem(const Op& op);

// "" when the type is well formed: a tile shape within Triton's limits (tile_shape_problem in
// types.hpp) and a layout that fits the rank, the warp (32 or 64 lanes) and the module's
// num_warps (verifier_types.cpp); else the problem.
std::string type_problem(const Type& t, int num_warps);

// The rule of each shared-memory op (is_shared_memory_op, ir.hpp) (verifier_shared.cpp).
std::string shared_memory_rule(const Op& op);

// "" when operand `i` of `op`, if present, is an i1 tile (or scalar) of `ptr`'s shape; else the
// problem (load, store, async_copy).
std::string mask_problem(const Op& op, int i, const Type& ptr);

// Types equal as the IR means it: a non-pointer's pointee field is ignored.
bool same_type(const Type& a, const Type& b);

}  // namespace tessera::ir

// Small IR-editing helpers shared by the passes (not a pass).
#pragma once
#include <memory>
#include <unordered_map>
#include <vector>

#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// store, atomic_rmw, atomic_cas, debug_barrier, print or assert: an op that writes memory or the
// output, orders memory, or may stop the launch, so that no load may move across it (regions not
// looked into).
bool writes_or_orders_memory(const ir::Op& op);
// return, yield, writes_or_orders_memory, or a for/if/do_while whose regions hold one: ops that
// must stay even unused.
bool has_side_effects(const ir::Op& op);
// An inline_asm whose assembly may have effects (pure = 0): never merged, moved or removed.
bool is_impure_asm(const ir::Op& op);
// An op that reads shared memory through a view operand (a dot over views, ops.def): its result
// depends on the buffer's contents at that point, so it is neither merged nor moved.
bool reads_shared_view(const ir::Op& op);
// An op that computes its results from its operands alone (no memory access, no regions): free to
// move anywhere its operands are defined and its results are not yet used.
bool is_pure_compute(const ir::Op& op);

using ir::index_in_block;  // (jit/ir/ir.hpp)
// Inserts `op` into anchor's block just before anchor; returns it.
ir::Op* insert_before(ir::Op& anchor, std::unique_ptr<ir::Op> op);
// Moves every op of `scratch` (built there with a Builder), in order, into `block` before `pos`.
void splice(ir::Block& scratch, ir::Block& block, std::vector<std::unique_ptr<ir::Op>>::iterator pos);
void splice_before(ir::Block& scratch, ir::Op& anchor);
// An op of `kind` with no operands or results (a fence, a barrier) just before `anchor`.
ir::Op* insert_marker(ir::Op& anchor, ir::OpKind kind, const ir::SourceLoc& loc);
// A `constant {value}` of type t, placed before anchor with anchor's location.
ir::Value* constant_before(ir::Op& anchor, const ir::Type& t, ir::Attr value);
// Removes op from its block (destroying it, its results and its regions).
void erase_op(ir::Op& op);
// Replaces each result of `op` by the matching value anywhere in the module, then erases op.
void replace_op(ir::Module& m, ir::Op& op, const std::vector<ir::Value*>& values);

// Removes every device_assert (ops.def `assert`) of the module: compiled code outside debug mode.
void erase_asserts(ir::Module& m);

// How many operands (anywhere below b) refer to each value.
std::unordered_map<const ir::Value*, int> count_uses(const ir::Block& b);

// Erases ops without side effects whose results are all unused, until none is left; for/if ops
// only when `include_region_ops`. Returns whether anything was erased.
bool erase_dead_ops(ir::Module& m, bool include_region_ops);

}  // namespace tessera::transforms

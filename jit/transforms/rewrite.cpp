#include "jit/transforms/rewrite.hpp"

#include <iterator>
#include <stdexcept>

namespace tessera::transforms {
using namespace ir;

bool is_impure_asm(const Op& op) { return op.kind == OpKind::InlineAsm && op.int_attr("pure") == 0; }

bool reads_shared_view(const ir::Op& op) {
  if (op.kind == OpKind::LocalLoad) return true;
  return op.kind == OpKind::Dot && (op.operands[0]->type.shared || op.operands[1]->type.shared);
}

bool is_pure_compute(const ir::Op& op) {
  if (!op.regions.empty() || op.results.empty() || is_impure_asm(op) || reads_shared_view(op)) return false;
  return op.info().category != ir::OpCategory::Memory && op.info().category != ir::OpCategory::Control;
}

bool writes_or_orders_memory(const Op& op) {
  // An atomic writes memory even when its returned old value is unused; a barrier orders it; a
  // print writes the output, in program order; an assert may stop the launch; inline assembly that
  // is not pure may do any of these. Shared memory: stores and copies write it, a commit or a wait
  // changes which copies have landed, a fence orders it.
  switch (op.kind) {
    case OpKind::Store: case OpKind::AtomicRmw: case OpKind::AtomicCas: case OpKind::DebugBarrier:
    case OpKind::Print: case OpKind::Assert: case OpKind::LocalStore: case OpKind::AsyncCopy:
    case OpKind::AsyncCommit: case OpKind::AsyncWait: case OpKind::FenceAsyncShared: return true;
    default: return is_impure_asm(op);
  }
}

bool has_side_effects(const Op& op) {
  if (op.kind == OpKind::Return || op.kind == OpKind::Yield || writes_or_orders_memory(op)) return true;
  for (const auto& r : op.regions)
    for (const auto& inner : r->block->ops)
      if (inner->kind != OpKind::Yield && has_side_effects(*inner)) return true;
  return false;
}

Op* insert_before(Op& anchor, std::unique_ptr<Op> op) {
  Block& b = *anchor.parent;
  op->parent = &b;
  auto it = b.ops.begin() + static_cast<std::ptrdiff_t>(index_in_block(anchor));
  return b.ops.insert(it, std::move(op))->get();
}

void splice(Block& scratch, Block& block, std::vector<std::unique_ptr<Op>>::iterator pos) {
  for (auto& op : scratch.ops) op->parent = &block;
  block.ops.insert(pos, std::make_move_iterator(scratch.ops.begin()), std::make_move_iterator(scratch.ops.end()));
  scratch.ops.clear();
}

void splice_before(Block& scratch, Op& anchor) {
  Block& b = *anchor.parent;
  splice(scratch, b, b.ops.begin() + static_cast<std::ptrdiff_t>(index_in_block(anchor)));
}

Op* insert_marker(Op& anchor, OpKind kind, const SourceLoc& loc) {
  auto op = std::make_unique<Op>();
  op->kind = kind;
  op->loc = loc;
  return insert_before(anchor, std::move(op));
}

Value* constant_before(Op& anchor, const Type& t, Attr value) {
  auto op = std::make_unique<Op>();
  op->kind = OpKind::Constant;
  op->attrs["value"] = std::move(value);
  op->loc = anchor.loc;
  op->add_result(t);
  return insert_before(anchor, std::move(op))->result();
}

void erase_op(Op& op) {
  Block& b = *op.parent;
  b.ops.erase(b.ops.begin() + static_cast<std::ptrdiff_t>(index_in_block(op)));
}

void replace_op(Module& m, Op& op, const std::vector<Value*>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) replace_all_uses(m.entry(), op.result(static_cast<int>(i)), values[i]);
  erase_op(op);
}

void erase_asserts(Module& m) {
  std::vector<Op*> asserts;
  walk(m.entry(), [&](Op& op) {
    if (op.kind == OpKind::Assert) asserts.push_back(&op);
  });
  for (Op* op : asserts) erase_op(*op);  // no results: nothing uses them
}

std::unordered_map<const Value*, int> count_uses(const Block& b) {
  std::unordered_map<const Value*, int> uses;
  walk(const_cast<Block&>(b), [&](Op& op) {
    for (auto* v : op.operands) ++uses[v];
  });
  return uses;
}

namespace {

bool unused(const Op& op, const std::unordered_map<const Value*, int>& uses) {
  for (const auto& r : op.results) {
    auto it = uses.find(r.get());
    if (it != uses.end() && it->second > 0) return false;
  }
  return true;
}

void forget_uses(Op& op, std::unordered_map<const Value*, int>& uses) {
  for (auto* v : op.operands) --uses[v];
  for (auto& r : op.regions)
    for (auto& inner : r->block->ops) forget_uses(*inner, uses);
}

// Back to front, so that an op's users are gone before the op is looked at.
bool sweep(Block& b, std::unordered_map<const Value*, int>& uses, bool include_region_ops) {
  bool changed = false;
  for (std::size_t i = b.ops.size(); i-- > 0;) {
    Op& op = *b.ops[i];
    for (auto& r : op.regions) changed |= sweep(*r->block, uses, include_region_ops);
    if (has_side_effects(op) || !unused(op, uses)) continue;
    if (!op.regions.empty() && !include_region_ops) continue;
    forget_uses(op, uses);
    b.ops.erase(b.ops.begin() + static_cast<std::ptrdiff_t>(i));
    changed = true;
  }
  return changed;
}

}  // namespace

bool erase_dead_ops(Module& m, bool include_region_ops) {
  auto uses = count_uses(m.entry());
  bool changed = false;
  while (sweep(m.entry(), uses, include_region_ops)) changed = true;
  return changed;
}

}  // namespace tessera::transforms

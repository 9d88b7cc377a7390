#include "jit/transforms/sink.hpp"

#include <unordered_map>

#include "jit/transforms/rewrite.hpp"

namespace tessera::transforms {
using ir::Op;
using ir::OpKind;

namespace {

// For each value used in block `b`, the index of the first op of `b` that uses it (itself or an op
// nested in its regions).
std::unordered_map<const ir::Value*, std::size_t> first_uses(ir::Block& b) {
  std::unordered_map<const ir::Value*, std::size_t> first;
  for (std::size_t k = 0; k < b.ops.size(); ++k) {
    auto note = [&](const Op& o) {
      for (const ir::Value* v : o.operands) first.try_emplace(v, k);
    };
    note(*b.ops[k]);
    for (auto& r : b.ops[k]->regions) ir::walk(*r->block, note);
  }
  return first;
}

void sink_in_block(ir::Block& b) {
  for (auto& op : b.ops)
    for (auto& r : op->regions) sink_in_block(*r->block);
  // From the last op up, so that an op follows its users down once they have moved.
  auto first = first_uses(b);
  for (std::size_t i = b.ops.size(); i-- > 0;) {
    if (!is_pure_compute(*b.ops[i])) continue;
    std::size_t user = b.ops.size();
    for (const auto& r : b.ops[i]->results) {
      auto it = first.find(r.get());
      if (it != first.end()) user = std::min(user, it->second);
    }
    if (user == b.ops.size()) continue;  // unused here (the terminator counts as a user)
    bool crosses = false;
    for (std::size_t k = i + 1; k < user; ++k)
      crosses |= b.ops[k]->kind == OpKind::For || b.ops[k]->kind == OpKind::DoWhile || b.ops[k]->kind == OpKind::ConvertLayout;
    if (!crosses) continue;
    auto moved = std::move(b.ops[i]);
    b.ops.erase(b.ops.begin() + static_cast<std::ptrdiff_t>(i));
    b.ops.insert(b.ops.begin() + static_cast<std::ptrdiff_t>(user - 1), std::move(moved));
    first = first_uses(b);
  }
}

}  // namespace

void sink_pure_ops(ir::Module& m) { sink_in_block(m.entry()); }

}  // namespace tessera::transforms

#include "jit/transforms/hoist_loads.hpp"
#include "jit/transforms/rewrite.hpp"

#include <algorithm>
#include <unordered_set>

namespace tessera::transforms {
using ir::Op;
using ir::OpKind;

namespace {

bool may_write(const Op& op) {
  if (writes_or_orders_memory(op)) return true;
  for (const auto& r : op.regions) {
    bool found = false;
    ir::walk(*r->block, [&](Op& inner) { found |= writes_or_orders_memory(inner); });
    if (found) return true;
  }
  return false;
}

void hoist_in_block(ir::Block& b) {
  for (auto& op : b.ops)
    for (auto& r : op->regions) hoist_in_block(*r->block);

  for (std::size_t i = 0; i < b.ops.size(); ++i) {
    if (b.ops[i]->kind != OpKind::Load) continue;
    // The load and the pure ops of this block it depends on (its "slice"), in block order.
    std::unordered_set<const Op*> slice{b.ops[i].get()};
    for (std::ptrdiff_t j = static_cast<std::ptrdiff_t>(i) - 1; j >= 0; --j) {
      const Op* cand = b.ops[j].get();
      bool feeds = false;
      for (const auto& user : slice)
        for (auto* v : user->operands) feeds |= v->def == cand;
      if (feeds && is_pure_compute(*cand)) slice.insert(cand);
    }
    const bool loads_tile = b.ops[i]->result()->type.is_tile();
    // The earliest point: after every write and every non-slice op the slice depends on.
    std::ptrdiff_t floor = -1;
    for (std::size_t j = 0; j < i; ++j) {
      const Op* cand = b.ops[j].get();
      if (slice.count(cand)) continue;
      bool feeds = false;
      for (const auto& user : slice)
        for (auto* v : user->operands) feeds |= v->def == cand;
      // Loads keep their order among themselves: the earlier load is issued first either way.
      // Nor does a tile's load move above a reduction or scan, which would keep its values live
      // through the reduction's barriers, or above a loop, which would keep them live through
      // every iteration (see hoist_loads.hpp).
      const bool keeps_tile_live = cand->kind == OpKind::Reduce || cand->kind == OpKind::Scan ||
                                   cand->kind == OpKind::For || cand->kind == OpKind::DoWhile;
      if (feeds || may_write(*cand) || cand->kind == OpKind::Load || (keeps_tile_live && loads_tile))
        floor = static_cast<std::ptrdiff_t>(j);
    }
    // Move the slice, in order, to just after `floor`.
    std::vector<std::unique_ptr<Op>> moved, kept;
    for (std::size_t j = static_cast<std::size_t>(floor + 1); j <= i; ++j)
      (slice.count(b.ops[j].get()) ? moved : kept).push_back(std::move(b.ops[j]));
    std::size_t pos = static_cast<std::size_t>(floor + 1);
    for (auto& op : moved) b.ops[pos++] = std::move(op);
    for (auto& op : kept) b.ops[pos++] = std::move(op);
  }
}

}  // namespace

void hoist_loads(ir::Module& m) { hoist_in_block(m.entry()); }

}  // namespace tessera::transforms

#include "jit/transforms/shared_encodings.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "jit/analysis/layouts.hpp"
#include "jit/analysis/shared_memory.hpp"
#include "jit/analysis/wgmma_in_flight.hpp"
#include "jit/transforms/rewrite.hpp"
#include "tessera/error.hpp"

namespace tessera::transforms {
using ir::Op;
using ir::OpKind;
using ir::SharedEncoding;
using ir::Value;

namespace {

// The dim along which the tiles written into `alloc`'s buffer run in registers (their layout's
// order[0]; an async_copy's pointers, a local_store's tile): wgmma reads the buffer with that dim
// contiguous, so that each thread's run is one 16-byte copy. 1 (rows) where nothing says.
int written_contiguous_dim(ir::Module& m, const Op& alloc) {
  int dim = -1;
  ir::walk(m.entry(), [&](Op& op) {
    if ((op.kind != OpKind::AsyncCopy && op.kind != OpKind::LocalStore) || analysis::shared_buffer_of(op.operands[0]) != &alloc)
      return;
    const ir::Layout& l = op.operands[1]->type.layout;  // of a 2-D tile: dim 0 or 1 of the view
    if (dim < 0 && l.kind == ir::Layout::Kind::Blocked && l.order.size() == 2) dim = l.order[0];
  });
  return dim < 0 ? 1 : dim;
}

SharedEncoding wanted_encoding(ir::Module& m, const Op& dot, const Op& alloc) {
  const ir::Type& buffer = alloc.result()->type;
  SharedEncoding e;
  if (!analysis::dot_uses_wgmma(dot)) {
    e.kind = SharedEncoding::Kind::Padded;
    e.bytes = 16;
    return e;
  }
  const int rank = buffer.rank();
  const int dim = written_contiguous_dim(m, alloc);
  const std::int64_t bytes = buffer.shape.at(static_cast<std::size_t>(rank - 2 + dim)) * ir::dtype_bytes(buffer.dtype);
  if (bytes < 32)
    throw InternalError(fmt::format("layout pass: wgmma operand of {} contiguous bytes at {}", bytes, dot.loc.str()));
  e.kind = SharedEncoding::Kind::Nvmma;
  e.bytes = static_cast<int>(std::min<std::int64_t>(128, bytes));
  e.transposed = dim == 0;
  return e;
}

// Gives the buffer of `alloc` and every view of it the encoding `e` (a transposed view, the bytes
// read the other way round: `e` with `transposed` flipped).
void set_encoding(ir::Module& m, Op& alloc, const SharedEncoding& e) {
  alloc.result()->type.encoding = e;
  ir::walk(m.entry(), [&](Op& op) {
    if (op.kind == OpKind::SmemIndex && analysis::shared_buffer_of(op.result()) == &alloc) op.result()->type.encoding = e;
  });
  ir::walk(m.entry(), [&](Op& op) {  // (after the smem_index views they read)
    if (op.kind != OpKind::SmemTrans || analysis::shared_buffer_of(op.result()) != &alloc) return;
    op.result()->type.encoding = op.operands[0]->type.encoding;
    op.result()->type.encoding.transposed = !op.result()->type.encoding.transposed;
  });
}

// A dot that does not run on wgmma reads a from padded rows along K (lower_dot.cpp), and b from
// rows along N or, for a transposed view (smem_trans), along K (ldmatrix without .trans). A
// transposed view as a is loaded into registers right before the dot, after the ring's wait and
// barrier, and the dot stages it as it stages any tile (ldmatrix .trans could read it: not done).
void load_transposed_views(Op& dot, int num_warps, int warp_size) {
  Value* view = dot.operands[0];
  if (!view->def || view->def->kind != OpKind::SmemTrans) return;
  ir::Type t = view->type;
  t.shared = false;
  t.encoding = {};
  // Lanes along dim 0, the one the bytes run along: neighbouring lanes, neighbouring addresses.
  t.layout = analysis::blocked_layout(t.shape, num_warps, warp_size, 1, {0, 1});
  ir::Block scratch;
  ir::Builder b(&scratch);
  b.set_loc(dot.loc);
  dot.operands[0] = b.create1(OpKind::LocalLoad, {view}, t);
  splice_before(scratch, dot);
}

// A fence_async_shared right after each local_store into `alloc`'s buffer (before the barrier
// that follows it: each thread fences its own stores, then the barrier makes every thread's
// visible), where there is none. Stores outside a loop are fenced once, outside it. Buffers that
// async_copy fills get none: cp.async's writes are read by wgmma after the wait and the barrier
// alone, as in Triton (its fence insertion fences register-to-shared copies only) and CUTLASS's
// cp.async GMMA mainloop; the fence in the loop cost a MEMBAR.ALL.CTA per K step.
void fence_stores_into(ir::Module& m, const Op& alloc) {
  std::vector<Op*> stores;
  ir::walk(m.entry(), [&](Op& op) {
    if (op.kind == OpKind::LocalStore && analysis::shared_buffer_of(op.operands[0]) == &alloc) stores.push_back(&op);
  });
  for (Op* store : stores) {
    const auto& ops = store->parent->ops;
    const std::size_t next = index_in_block(*store) + 1;
    if (next < ops.size() && ops[next]->kind == OpKind::FenceAsyncShared) continue;
    insert_marker(*ops.at(next), OpKind::FenceAsyncShared, store->loc);
  }
}

// Form 2 of wgmma_in_flight.hpp: the dot waits for nothing, its body's first wgmma dot W retires
// it. Unless a synchronous wgmma dot later in the body retires it within its iteration, the stage
// that the copies after W refill must not be one another warpgroup may still read: D's rings one
// stage longer where that keeps the programs per SM (and no other dot's decision lengthened them),
// else a debug_barrier right after W (one, for every dot W retires).
void defer_wgmma(ir::Module& m, Op& dot, std::vector<const Op*>& lengthened) {
  dot.attrs["wgmma_in_flight"] = std::int64_t{2};
  if (analysis::wgmma_retired_in_iteration(dot)) return;
  std::vector<const Op*> rings;
  for (int l = 0; l < 2; ++l)
    if (analysis::dot_reads_view(dot, l)) rings.push_back(analysis::shared_buffer_of(dot.operands[static_cast<std::size_t>(l)]));
  const bool free = std::none_of(rings.begin(), rings.end(), [&](const Op* r) {
    return std::count(lengthened.begin(), lengthened.end(), r) > 0;
  }) && !(rings.size() == 2 && rings[0] == rings[1]);
  if (free && analysis::spare_stages_keep_programs(m, rings)) {
    for (const Op* r : rings) ++const_cast<Op*>(r)->result()->type.shape[0], lengthened.push_back(r);
    return;
  }
  const Op& w = *analysis::wgmma_retiring_dot(dot);
  Op& after_w = *dot.parent->ops.at(index_in_block(w) + 1);
  if (after_w.kind != OpKind::DebugBarrier) insert_marker(after_w, OpKind::DebugBarrier, w.loc);
}

}  // namespace

void encode_shared_buffers(ir::Module& m, int warp_size) {
  std::vector<Op*> dots;
  ir::walk(m.entry(), [&](Op& op) {
    if (analysis::dot_reads_view(op, 0) || analysis::dot_reads_view(op, 1)) dots.push_back(&op);
  });
  std::vector<std::pair<const Op*, SharedEncoding>> decided;  // buffer -> encoding
  std::vector<const Op*> lengthened;                          // rings given a spare stage (once each)
  for (Op* dot : dots) {
    for (int l = 0; l < 2; ++l) {
      if (!analysis::dot_reads_view(*dot, l)) continue;  // staged by the dot itself
      Op* alloc = const_cast<Op*>(analysis::shared_buffer_of(dot->operands[static_cast<std::size_t>(l)]));
      if (!alloc) throw InternalError(fmt::format("layout pass: a dot reads a view of no local_alloc at {}", dot->loc.str()));
      const SharedEncoding want = wanted_encoding(m, *dot, *alloc);
      const SharedEncoding& has = alloc->result()->type.encoding;
      auto earlier = std::find_if(decided.begin(), decided.end(), [&](const auto& d) { return d.first == alloc; });
      if ((earlier != decided.end() && !(earlier->second == want)) ||
          (earlier == decided.end() && has.kind != SharedEncoding::Kind::RowMajor && !(has == want)))
        throw ProgramError(fmt::format("dot at {} reads a shared buffer ({}) as {}, which {}", dot->loc.str(),
                                       ir::to_string(alloc->result()->type), ir::to_string(want),
                                       earlier != decided.end() ? "another dot reads differently" : "its type contradicts"));
      if (earlier == decided.end()) decided.emplace_back(alloc, want);
      set_encoding(m, *alloc, want);
    }
    dot->attrs.erase("wgmma_in_flight");  // decided here, whatever the IR said
    if (!analysis::dot_uses_wgmma(*dot)) {
      load_transposed_views(*dot, m.num_warps, warp_size);
      continue;
    }
    // The operands the dot stages itself it fences itself (lower_dot).
    for (int l = 0; l < 2; ++l)
      if (analysis::dot_reads_view(*dot, l)) fence_stores_into(m, *analysis::shared_buffer_of(dot->operands[static_cast<std::size_t>(l)]));
    if (analysis::wgmma_may_defer(*dot) && !analysis::wgmma_may_stay_in_flight(*dot)) {
      defer_wgmma(m, *dot, lengthened);
      continue;
    }
    if (!analysis::wgmma_may_stay_in_flight(*dot)) continue;  // (only dots reading two rings may)
    dot->attrs["wgmma_in_flight"] = std::int64_t{1};
    Op* rings[2] = {const_cast<Op*>(analysis::shared_buffer_of(dot->operands[0])),
                    const_cast<Op*>(analysis::shared_buffer_of(dot->operands[1]))};
    const bool shared_ring = std::count(lengthened.begin(), lengthened.end(), rings[0]) + std::count(lengthened.begin(), lengthened.end(), rings[1]);
    if (!shared_ring && rings[0] != rings[1] && analysis::wgmma_spare_stage(*dot)) {
      for (Op* r : rings) ++r->result()->type.shape[0], lengthened.push_back(r);
    } else {
      insert_marker(*dot->parent->ops.at(index_in_block(*dot) + 1), OpKind::DebugBarrier, dot->loc);  // before the yield at the latest
    }
  }
}

}  // namespace tessera::transforms

#include "jit/analysis/shared_memory.hpp"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "jit/analysis/layouts.hpp"
#include "jit/analysis/register_conversion.hpp"
#include "tessera/error.hpp"

namespace tessera::analysis {
using ir::Op;
using ir::OpKind;
using I = std::int64_t;

bool has_replicas(const ir::Type& t) {
  if (!t.is_tile()) return true;
  const auto dist = distribute(t);
  for (std::size_t d = 0; d < dist.shape.size(); ++d)
    if (dist.shape[d] < dist.cta_tile[d]) return true;
  return false;
}

namespace {

// Slots along `axis` that one thread holds, in groups of size_per_thread: the repetitions of the
// CTA tile along the axis (a scan exchanges one partial per repetition and warp).
I repetitions_along_axis(const ir::Type& t, int axis) {
  const auto dist = distribute(t);
  const I spt = dist.layout.size_per_thread[axis];
  return (dist.slots[axis] + spt - 1) / spt;
}

bool is_private_user(const Op& op) {
  return op.kind == OpKind::ConvertLayout || op.kind == OpKind::Reduce || op.kind == OpKind::Scan || op.kind == OpKind::LocalAlloc;
}

std::unordered_set<const ir::Value*> used_values(const ir::Module& m) {
  std::unordered_set<const ir::Value*> used;
  ir::walk(const_cast<ir::Block&>(m.entry()), [&](const Op& op) {
    for (const ir::Value* v : op.operands) used.insert(v);
  });
  return used;
}

I align_up(I bytes, I alignment) { return (bytes + alignment - 1) / alignment * alignment; }

}  // namespace

I dot_row_pad(ir::DType operand) { return 16 / ir::dtype_bytes(operand); }
I dot_row_stride(ir::DType operand, I row_elems) { return row_elems + dot_row_pad(operand); }
bool is_shared_access(const Op& op) { return op.kind == OpKind::LocalStore || op.kind == OpKind::LocalLoad; }
bool dot_reads_view(const Op& dot, int operand) {
  return dot.kind == OpKind::Dot && dot.operands.at(static_cast<std::size_t>(operand))->type.shared;
}
bool is_async_dot(const Op& op) { return dot_reads_view(op, 0) && dot_reads_view(op, 1); }

const Op* shared_buffer_of(const ir::Value* v) {
  if (!v->type.shared || !v->def) return nullptr;
  if (v->def->kind == OpKind::SmemIndex || v->def->kind == OpKind::SmemTrans) return shared_buffer_of(v->def->operands.at(0));
  return v->def->kind == OpKind::LocalAlloc ? v->def : nullptr;
}

I shared_stage_bytes(const ir::Type& view) {
  // The stored rows run along the last dim, or the next-to-last in a transposed view (smem_trans).
  const I row = view.encoding.transposed ? view.shape.at(view.shape.size() - 2) : view.shape.back();
  const I esz = ir::dtype_bytes(view.dtype), rows = view.numel() / row;
  switch (view.encoding.kind) {
    case ir::SharedEncoding::Kind::Nvmma: return align_up(view.numel() * esz, 1024);
    case ir::SharedEncoding::Kind::Padded: return rows * (row * esz + view.encoding.bytes);
    case ir::SharedEncoding::Kind::RowMajor: break;
  }
  return view.numel() * esz;
}

I dot_stage_bytes(const Op& dot, int operand) {
  const auto& t = dot.operands.at(static_cast<std::size_t>(operand))->type;
  // wgmma operands are dense swizzled tiles (shared_stage_bytes); mma.sync operands have padded rows.
  if (dot_uses_wgmma(dot)) return align_up(t.numel() * ir::dtype_bytes(t.dtype), 1024);
  return t.shape[0] * dot_row_stride(t.dtype, t.shape[1]) * ir::dtype_bytes(t.dtype);
}

bool dot_stages(const Op& dot, int operand) {
  return !dot_reads_view(dot, operand) && !(operand == 0 && wgmma_a_in_registers(dot));
}

I dot_staged_offset(const Op& dot, int operand) { return operand == 1 && dot_stages(dot, 0) ? dot_stage_bytes(dot, 0) : 0; }

I dot_staged_bytes(const Op& dot) {
  I bytes = 0;
  for (int l = 0; l < 2; ++l)
    if (dot_stages(dot, l)) bytes += dot_stage_bytes(dot, l);
  return bytes;
}



I convert_row_pad(const Op& convert) {
  const ir::Type& src = convert.operands.at(0)->type;
  const ir::Type& dst = convert.result()->type;
  if (!src.is_tile() || dst.dtype == ir::DType::I1 || src.layout.is_none() || dst.layout.is_none()) return 1;
  const I esz = ir::dtype_bytes(dst.dtype);
  if (row_run(src) < 2 || row_run(dst) < 2 || dst.shape.back() * esz % 16 != 0) return 1;
  return 16 / esz;
}

OperandParts operand_parts(const Op& op, I elements) {
  OperandParts parts;
  for (const ir::Value* v : op.operands) {
    const I esz = ir::dtype_bytes(v->type.dtype);
    parts.bytes = align_up(parts.bytes, esz);
    parts.base.push_back(parts.bytes);
    parts.bytes += elements * esz;
  }
  return parts;
}

I shared_alignment(const Op& op) {
  if (op.kind == OpKind::LocalAlloc) return op.result()->type.encoding.kind == ir::SharedEncoding::Kind::Nvmma ? 1024 : 16;
  return dot_uses_wgmma(op) ? 1024 : 16;
}

I shared_bytes(const Op& op) {
  I bytes = 0;
  switch (op.kind) {
    case OpKind::Dot: return dot_staged_bytes(op);  // the operands it reads from registers (lower_dot.cpp)
    case OpKind::LocalAlloc: {  // its stages (the leading dim of 3) one after the other; one of 1 or 2 dims whole
      const ir::Type& t = op.result()->type;
      // (A 2-D buffer is one tile: attention's Q, 128x128 f16 with a swizzle, was sized as 128
      // swizzled 1-D stages, 1 KB each, 128 KB instead of 32, until session 31.)
      if (t.rank() <= 2) return shared_stage_bytes(t);
      return t.shape[0] * shared_stage_bytes(t.with_shape(std::vector<I>(t.shape.begin() + 1, t.shape.end())));
    }
    case OpKind::ConvertLayout: {
      if (register_renaming(op.operands[0]->type, op.result()->type)) return 0;  // in registers
      const auto& t = op.result()->type;  // rows padded (lower_convert_layout)
      return (t.numel() + t.numel() / t.shape.back() * convert_row_pad(op)) * ir::dtype_bytes(t.dtype);
    }
    case OpKind::Reduce:
    case OpKind::Scan: {
      // [repetition (scans)][warp position along the axis][line] per operand.
      const auto& t = op.operands[0]->type;
      const int axis = static_cast<int>(op.int_attr("axis"));
      const I warps = warps_along_axis(t, axis);
      if (warps == 1) return 0;
      const I reps = op.kind == OpKind::Scan ? repetitions_along_axis(t, axis) : 1;
      return operand_parts(op, reps * warps * (t.numel() / t.shape[axis])).bytes;
    }
    case OpKind::Reshape:  // shape ops hold all their operands' elements (lower_shape.cpp)
    case OpKind::Trans:
    case OpKind::Join:
    case OpKind::Split:
      for (auto* v : op.operands) bytes += v->type.numel() * ir::dtype_bytes(v->type.dtype);
      return bytes;
    case OpKind::Gather: {  // src only: the index stays in registers
      const auto& src = op.operands[0]->type;
      return src.numel() * ir::dtype_bytes(src.dtype);
    }
    case OpKind::AtomicRmw:  // the old values, handed from owners to replicas (lower_atomics.cpp)
    case OpKind::AtomicCas: {
      const auto& t = op.result()->type;
      return has_replicas(op.operands[0]->type) ? std::max<I>(1, t.numel()) * ir::dtype_bytes(t.dtype) : 0;
    }
    default: return 0;
  }
}

SharedMemoryPlan::SharedMemoryPlan(const ir::Module& m) {
  allocate(m);
  Pending pending;
  walk_block(m.entry(), pending);
}

void SharedMemoryPlan::allocate(const ir::Module& m) {
  const auto used = used_values(m);
  // Program order (pre-order: a loop before its body).
  std::map<const Op*, I> position;
  ir::walk(const_cast<ir::Block&>(m.entry()), [&](const Op& op) { position[&op] = static_cast<I>(position.size()); });
  // The span of the top-level op that holds each op, and the buffers each top-level op (with
  // its regions) reads or writes through views.
  std::map<const Op*, std::pair<I, I>> top_span;
  std::map<const Op*, std::set<const Op*>> buffers_used;
  for (const auto& top : m.entry().ops) {
    std::vector<const Op*> inside{top.get()};
    I end = position.at(top.get());
    for (const auto& r : top->regions)
      ir::walk(*r->block, [&](const Op& o) {
        inside.push_back(&o);
        end = std::max(end, position.at(&o));
      });
    for (const Op* o : inside) {
      top_span[o] = {position.at(top.get()), end};
      for (const ir::Value* v : o->operands)
        if (const Op* alloc = shared_buffer_of(v)) buffers_used[top.get()].insert(alloc);
    }
  }
  // Where a buffer is live: from the first top-level op that uses it to the last position of the
  // top-level op that holds its last use, or of the first async_wait {pending = 0} after it:
  // copies into the buffer may land until then (an op the layout pass put between a loop and its
  // wait must not share the bytes).
  auto buffer_span = [&](const Op& alloc) -> std::pair<I, I> {
    I first = -1, last = position.at(&alloc);
    bool waiting = false;
    for (const auto& top : m.entry().ops) {
      const auto [begin, end] = top_span.at(top.get());
      const auto used_here = buffers_used.find(top.get());
      if (used_here != buffers_used.end() && used_here->second.count(&alloc)) {
        if (first < 0) first = begin;
        last = std::max(last, end);
        waiting = true;
      } else if (waiting && top->kind == OpKind::AsyncWait && top->int_attr("pending") == 0) {
        last = std::max(last, end);
        waiting = false;
      }
    }
    return {first < 0 ? position.at(&alloc) : first, last};
  };
  // Rings: buffers that async copies fill (the pipeline pass's). Other buffers (a conversion's)
  // are private regions like a reduction's, but for their live spans.
  std::set<const Op*>& rings = rings_;
  ir::walk(const_cast<ir::Block&>(m.entry()), [&](const Op& op) {
    if (op.kind == OpKind::AsyncCopy) rings.insert(shared_buffer_of(op.operands[0]));
  });
  struct Placed {
    const Op* op;
    I begin, end;
    bool ring = false, buffer = false;  // a local_alloc: async copies fill it, or not
    I live_begin = -1, live_end = -1;   // a buffer's span (buffer_span); else its top-level op's
  };
  // Two private regions may share bytes where one is dead before the other is first written: an
  // op or buffer after a ring's span (a matmul's epilogue in the finished ring), or two buffers
  // (conversions) in different top-level ops. Ops that move elements through their own regions
  // (reductions, scans, and conversions of other than 2-D tiles) keep regions of their own, so
  // that two in a row need no barrier between them (softmax's max then sum), unless that costs
  // more than kSeparateRegionsBytes: then any two in different top-level ops may share too
  // (place-barriers puts a barrier where two share bytes).
  auto may_share = [&](const Placed& p, const Placed& q, bool share_ops) {
    if (q.ring) return false;
    if (p.ring) return q.live_begin > p.live_end;
    return (share_ops || (p.buffer && q.buffer)) && (q.live_begin > p.live_end || p.live_begin > q.live_end);
  };
  std::vector<Placed> private_ops, shared_ops;
  I shared_region = 0, private_bytes = 0;
  auto place_all = [&](bool share_ops) {
    private_ops.clear();
    shared_ops.clear();
    users_.clear();
    shared_region = private_bytes = 0;
    alignment_ = 16;
    ir::walk(const_cast<ir::Block&>(m.entry()), [&](const Op& op) {
      const bool atomic = op.kind == OpKind::AtomicRmw || op.kind == OpKind::AtomicCas;
      if (atomic && !used.count(op.result())) return;  // nobody reads the old values: nothing to share
      const I bytes = shared_bytes(op);
      if (bytes == 0) return;
      users_.push_back(&op);
      const I align = shared_alignment(op);
      alignment_ = std::max(alignment_, align);
      if (!is_private_user(op)) {
        shared_ops.push_back({&op, 0, bytes});
        shared_region = std::max(shared_region, align_up(bytes, 16));
        return;
      }
      // First fit: the lowest aligned offset, from 0 or past some placed region, that overlaps no
      // region this one may not share.
      Placed q{&op, 0, bytes};
      q.buffer = op.kind == OpKind::LocalAlloc;
      q.ring = rings.count(&op) > 0;
      std::tie(q.live_begin, q.live_end) = q.buffer ? buffer_span(op) : top_span.at(&op);
      auto fits = [&](I at) {
        return std::none_of(private_ops.begin(), private_ops.end(), [&](const Placed& p) {
          return at < p.end && p.begin < at + bytes && !may_share(p, q, share_ops);
        });
      };
      I at = 0;
      if (!fits(at))
        for (const Placed& p : private_ops) {
          const I candidate = align_up(p.end, align);
          if (fits(candidate) && (at == 0 || candidate < at)) at = candidate;
        }
      q.begin = at;
      q.end = at + bytes;
      private_ops.push_back(q);
      private_bytes = std::max(private_bytes, align_up(at + bytes, 16));  // each region 16-byte aligned
    });
  };
  place_all(false);
  // The budget counts what regions of their own cost: rings and other buffers share by liveness
  // either way (a pipelined matmul's rings alone must not make its reductions share).
  I separate_bytes = 0;
  for (const Placed& p : private_ops)
    if (!p.buffer) separate_bytes += align_up(p.end - p.begin, 16);
  if (separate_bytes > kSeparateRegionsBytes) place_all(true);
  // The private regions start where the shared one ends, aligned as the most demanding of them.
  shared_region = align_up(shared_region, alignment_);
  for (const Placed& u : shared_ops) regions_[u.op] = {0, u.end};
  for (const Placed& u : private_ops) regions_[u.op] = {shared_region + u.begin, shared_region + u.end};
  total_bytes_ = shared_region + private_bytes;
}

I SharedMemoryPlan::offset(const Op& op) const {
  auto it = regions_.find(&op);
  if (it == regions_.end()) throw InternalError(fmt::format("shared memory: '{}' at {} has no region", op.name(), op.loc.str()));
  return it->second.first;
}

bool SharedMemoryPlan::barrier_before(const Op& op, int phase) const {
  if (!regions_.count(&op) && !is_shared_access(op)) throw InternalError(fmt::format("shared memory: '{}' at {} has no region", op.name(), op.loc.str()));
  return barriers_.count({&op, phase}) > 0;
}

SharedMemoryPlan::Pending SharedMemoryPlan::join(const Pending& a, const Pending& b) {
  Pending out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

void SharedMemoryPlan::walk_phase(const Op& op, int phase, Access access, Pending& pending) {
  // An op's reads follow its own writes: the barrier between them is part of the op.
  // (The attribute speaks only for ops whose lowering reads it: not local_store or local_load.)
  const bool in_ir = phase == 1 || (phase == 0 && !is_shared_access(op) && op.has_attr(kBarrierBeforeWrites));
  const bool conflict = std::any_of(pending.begin(), pending.end(), [&](const Access& p) {
    return (p.write || access.write) && p.begin < access.end && access.begin < p.end;
  });
  if (in_ir || conflict) {
    if (!in_ir && !barriers_.count({&op, phase})) missing_.emplace_back(&op, phase);
    barriers_.insert({&op, phase});
    pending.clear();
  }
  pending = join(pending, {access});
}

SharedMemoryPlan::Access SharedMemoryPlan::view_access(const Op& op, int operand, bool write) const {
  const ir::Value* view = op.operands.at(static_cast<std::size_t>(operand));
  const Op* alloc = shared_buffer_of(view);
  if (!alloc || !regions_.count(alloc))
    throw InternalError(fmt::format("shared memory: '{}' at {} reads or writes a view of no local_alloc", op.name(), op.loc.str()));
  auto [begin, end] = regions_.at(alloc);
  const Op* index = view->def;
  if (index && index->kind == OpKind::SmemTrans) index = index->operands.at(0)->def;  // the same bytes
  if (index && index->kind == OpKind::SmemIndex) {
    const Op* slot = index->operands.at(1)->def;
    const I stages = index->operands.at(0)->type.shape.at(0);
    if (slot && slot->kind == OpKind::Constant && std::holds_alternative<I>(slot->attrs.at("value"))) {
      const I stage = ((std::get<I>(slot->attrs.at("value")) % stages) + stages) % stages, bytes = (end - begin) / stages;
      begin += stage * bytes;
      end = begin + bytes;
    }
  }
  return {begin, end, write};
}

void SharedMemoryPlan::walk_dot_with_views(const Op& dot, Pending& pending) {
  Pending reads;
  for (int l = 0; l < 2; ++l)
    if (dot_reads_view(dot, l)) reads = join(reads, {view_access(dot, l, false)});
  if (regions_.count(&dot)) {  // it stages its other operand: the barrier before its reads orders the views too
    const auto& [begin, end] = regions_.at(&dot);
    walk_phase(dot, 0, Access{begin, end, true}, pending);
    walk_phase(dot, 1, Access{begin, end, false}, pending);
    pending = join(pending, reads);
    return;
  }
  for (const Access& a : reads) walk_phase(dot, 0, a, pending);  // a barrier right before the dot
}

void SharedMemoryPlan::walk_block(const ir::Block& b, Pending& pending) {
  for (const auto& op : b.ops) {
    if (op->kind == OpKind::For || op->kind == OpKind::DoWhile) {
      // The head sees what precedes the loop and what the end of the body leaves; barriers only
      // get added, so the pending set at the head grows monotonically to a fixed point.
      Pending head = pending;
      for (;;) {
        Pending end = head;
        walk_block(*op->regions[0]->block, end);
        Pending next = join(head, end);
        if (next == head) break;
        head = std::move(next);
      }
      pending = head;  // a for may run zero times: its exit sees the head (a superset of the end)
      // A buffer this loop used (copies into it, a dot's reads): a write of its bytes, for
      // whatever reuses them after the loop.
      ir::walk(*op->regions[0]->block, [&](const Op& o) {
        for (const ir::Value* v : o.operands) {
          const Op* alloc = shared_buffer_of(v);
          if (!alloc || !regions_.count(alloc)) continue;
          const auto& [begin, end] = regions_.at(alloc);
          pending = join(pending, {Access{begin, end, true}});
        }
      });
    } else if (op->kind == OpKind::If) {
      Pending then_arm = pending, else_arm = pending;
      walk_block(*op->regions[0]->block, then_arm);
      walk_block(*op->regions[1]->block, else_arm);
      pending = join(then_arm, else_arm);
    } else if (op->kind == OpKind::DebugBarrier) {
      pending.clear();
    } else if (is_shared_access(*op)) {
      walk_phase(*op, 0, view_access(*op, 0, op->kind == OpKind::LocalStore), pending);
    } else if (dot_reads_view(*op, 0) || dot_reads_view(*op, 1)) {
      walk_dot_with_views(*op, pending);
    } else if (regions_.count(op.get()) && op->kind != OpKind::LocalAlloc) {
      const auto& [begin, end] = regions_.at(op.get());
      walk_phase(*op, 0, Access{begin, end, true}, pending);
      walk_phase(*op, 1, Access{begin, end, false}, pending);
    }
    // The combine regions of reductions and scans hold scalar code only: nothing to walk.
  }
}

std::string SharedMemoryPlan::describe() const {
  std::string out = fmt::format("shared memory: {} bytes, {} barriers\n", total_bytes_, barriers_.size());
  for (const Op* op : users_) {
    const auto& [begin, end] = regions_.at(op);
    out += fmt::format("{} @{}: [{}, {}) barrier before:{}{}\n", op->name(), op->loc.line, begin, end,
                       barrier_before(*op, 0) ? " write" : "", barrier_before(*op, 1) ? " read" : "");
  }
  return out;
}

}  // namespace tessera::analysis

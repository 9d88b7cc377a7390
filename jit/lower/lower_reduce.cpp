// reduce and scan lowering.
//
// reduce, in three levels (as Triton does): (1) each thread combines the slots it owns along the
// axis; (2) lanes that hold other positions along the axis combine through butterfly shuffles;
// (3) warps that hold other positions along the axis combine through shared memory. Positions a
// layout replicates (a shape smaller than the layout's CTA tile) are combined once: the shuffle
// and warp steps only span the distinct positions. Every thread ends with the full result, which
// is what the result's slice layout says.
//
// scan goes through shared memory: the elements are written at their row-major index, one thread
// per line along the axis scans it in place, and every thread reads back what it owns. It is
// correct for any layout; a shuffle-based scan is future work.
#include <fmt/format.h>

#include "jit/lower/lowering.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
using ir::DType;
using ir::Op;
using I = std::int64_t;

namespace {
I product(const std::vector<I>& v) {
  I p = 1;
  for (auto x : v) p *= x;
  return p;
}
}  // namespace

std::vector<llvm::Value*> KernelLowering::combine(const Op& op, const std::vector<llvm::Value*>& lhs,
                                                   const std::vector<llvm::Value*>& rhs) {
  const ir::Block& body = *op.regions[0]->block;
  const std::size_t n = lhs.size();
  for (std::size_t i = 0; i < n; ++i) {
    set(body.args[i].get(), {lhs[i]});
    set(body.args[n + i].get(), {rhs[i]});
  }
  lower_block(body);
  std::vector<llvm::Value*> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(yielded_by(body, static_cast<int>(i))[0]);
  return out;
}

llvm::Value* KernelLowering::shuffle_xor_any(llvm::Value* v, int lane_mask) {
  llvm::Type* t = v->getType();
  const llvm::DataLayout& dl = module_->getDataLayout();
  const unsigned bits = static_cast<unsigned>(dl.getTypeSizeInBits(t));
  llvm::Type* int_t = b_.getIntNTy(bits);
  llvm::Value* as_int = t->isPointerTy() ? b_.CreatePtrToInt(v, int_t) : b_.CreateBitCast(v, int_t);
  llvm::Value* out;
  if (bits <= 32) {
    llvm::Value* w = target_.shuffle_xor(b_, b_.CreateZExt(as_int, b_.getInt32Ty()), lane_mask);
    out = b_.CreateTrunc(w, int_t);
  } else {  // 64 bits: two halves
    llvm::Value* lo = target_.shuffle_xor(b_, b_.CreateTrunc(as_int, b_.getInt32Ty()), lane_mask);
    llvm::Value* hi = target_.shuffle_xor(b_, b_.CreateTrunc(b_.CreateLShr(as_int, 32), b_.getInt32Ty()), lane_mask);
    out = b_.CreateOr(b_.CreateZExt(lo, int_t), b_.CreateShl(b_.CreateZExt(hi, int_t), 32));
  }
  return t->isPointerTy() ? b_.CreateIntToPtr(out, t) : b_.CreateBitCast(out, t);
}

llvm::Value* KernelLowering::warp_coord(const ir::Layout& l, int d) {
  llvm::IRBuilder<> pb(fn_->getEntryBlock().getTerminator());
  llvm::Value* warp = pb.CreateUDiv(tid_, pb.getInt32(target_.warp_size()));
  for (int o : l.order) {
    if (o == d) return pb.CreateURem(warp, pb.getInt32(l.warps_per_cta[o]));
    warp = pb.CreateUDiv(warp, pb.getInt32(l.warps_per_cta[o]));
  }
  throw InternalError("warp_coord: dim not in the layout's order");
}

void KernelLowering::lower_reduce(const Op& op) {
  const ir::Type& in_t = op.operands[0]->type;
  const int axis = static_cast<int>(op.int_attr("axis"));
  const auto dist = analysis::distribute(in_t);
  if (dist.slice_dim >= 0) throw InternalError("reduce operand must be in a blocked layout");
  const auto& l = dist.layout;
  const std::size_t n = op.operands.size();

  // (1) Within the thread: for each output slot, combine the slots along the axis in order.
  std::vector<I> out_slots = dist.slots;
  out_slots[axis] = 1;
  const I num_out = product(out_slots);
  std::vector<std::vector<llvm::Value*>> acc(num_out);
  for (I k = 0; k < dist.num_slots(); ++k) {
    auto c = dist.slot_coords(k);
    c[axis] = 0;
    I o = 0;
    for (std::size_t d = 0; d < c.size(); ++d) o = o * out_slots[d] + c[d];
    std::vector<llvm::Value*> elems;
    for (std::size_t i = 0; i < n; ++i) elems.push_back(get(op.operands[i])[k]);
    acc[o] = acc[o].empty() ? elems : combine(op, acc[o], elems);
  }

  // (2) Across lanes: butterfly over the lane bits of the axis that hold distinct positions.
  const I spt = l.size_per_thread[axis], tpw = l.threads_per_warp[axis], wpc = l.warps_per_cta[axis];
  const I shape_a = dist.shape[axis];
  const I distinct_lanes = std::min<I>(tpw, std::max<I>(1, shape_a / spt));
  I lane_stride = 1;
  for (int o : l.order) {
    if (o == axis) break;
    lane_stride *= l.threads_per_warp[o];
  }
  for (I step = 1; step < distinct_lanes; step *= 2)
    for (auto& a : acc) {
      std::vector<llvm::Value*> other;
      for (auto* v : a) other.push_back(shuffle_xor_any(v, static_cast<int>(step * lane_stride)));
      a = combine(op, a, other);
    }

  // (3) Across warps, through shared memory: [warp position][operand][output element].
  const I distinct_warps = std::min<I>(wpc, std::max<I>(1, shape_a / (spt * tpw)));
  const ir::Type& out_t = op.result()->type;
  if (distinct_warps > 1) {
    const I out_numel = in_t.numel() / shape_a;
    llvm::Value* wa = warp_coord(l, axis);
    // Row-major index of each output element: output slot o is slot o of the result, whose slice
    // layout spreads the output exactly as the operand's layout with the axis collapsed.
    std::vector<llvm::Value*> lins;
    for (I o = 0; o < num_out; ++o) lins.push_back(out_t.is_tile() ? element_linear_index(out_t, o) : b_.getInt32(0));
    I offset_bytes = 0;
    std::vector<I> operand_base;
    for (std::size_t i = 0; i < n; ++i) {
      operand_base.push_back(offset_bytes);
      offset_bytes += distinct_warps * out_numel * ir::dtype_bytes(op.operands[i]->type.dtype);
    }
    auto slot_ptr = [&](std::size_t i, llvm::Value* warp, llvm::Value* lin, llvm::Type* elem) {
      llvm::Value* base = b_.CreateGEP(b_.getInt8Ty(), scratch(op), b_.getInt32(static_cast<std::uint32_t>(operand_base[i])));
      llvm::Value* idx = b_.CreateAdd(b_.CreateMul(warp, b_.getInt32(static_cast<std::uint32_t>(out_numel))), lin);
      return b_.CreateGEP(elem, base, idx);
    };
    llvm::Value* wa_distinct = b_.CreateURem(wa, b_.getInt32(static_cast<std::uint32_t>(distinct_warps)));
    for (I o = 0; o < num_out; ++o)
      for (std::size_t i = 0; i < n; ++i) {
        llvm::Value* v = acc[o][i];
        llvm::Type* elem = v->getType()->isIntegerTy(1) ? b_.getInt8Ty() : v->getType();
        if (v->getType()->isIntegerTy(1)) v = b_.CreateZExt(v, elem);
        b_.CreateStore(v, slot_ptr(i, wa_distinct, lins[o], elem));
      }
    target_.barrier(b_);
    for (I o = 0; o < num_out; ++o) {
      std::vector<llvm::Value*> total;
      for (I w = 0; w < distinct_warps; ++w) {
        std::vector<llvm::Value*> part;
        for (std::size_t i = 0; i < n; ++i) {
          llvm::Type* t = acc[o][i]->getType();
          llvm::Type* elem = t->isIntegerTy(1) ? b_.getInt8Ty() : t;
          llvm::Value* v = b_.CreateLoad(elem, slot_ptr(i, b_.getInt32(static_cast<std::uint32_t>(w)), lins[o], elem));
          part.push_back(t->isIntegerTy(1) ? b_.CreateTrunc(v, t) : v);
        }
        total = total.empty() ? part : combine(op, total, part);
      }
      acc[o] = total;
    }
    scratch_done(op);
  }

  for (std::size_t i = 0; i < n; ++i) {
    Elems out;
    for (I o = 0; o < num_out; ++o) out.push_back(acc[o][i]);
    set(op.result(static_cast<int>(i)), std::move(out));
  }
}

void KernelLowering::lower_scan(const Op& op) {
  const ir::Type& t = op.operands[0]->type;
  const int axis = static_cast<int>(op.int_attr("axis"));
  const bool reverse = op.has_attr("reverse") && op.int_attr("reverse") != 0;
  const std::size_t n = op.operands.size();
  const I numel = t.numel();
  const I len = t.shape[axis];
  I inner = 1;
  for (int d = axis + 1; d < t.rank(); ++d) inner *= t.shape[d];
  const I lines = numel / len;

  std::vector<I> base_bytes;
  std::vector<llvm::Type*> mem_types;
  I bytes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    base_bytes.push_back(bytes);
    const auto& ti = op.operands[i]->type;
    mem_types.push_back(ti.dtype == DType::I1 ? b_.getInt8Ty() : scalar_type(ti.element()));
    bytes += numel * ir::dtype_bytes(ti.dtype);
  }
  auto elem_ptr = [&](std::size_t i, llvm::Value* idx) {
    llvm::Value* base = b_.CreateGEP(b_.getInt8Ty(), scratch(op), b_.getInt32(static_cast<std::uint32_t>(base_bytes[i])));
    return b_.CreateGEP(mem_types[i], base, idx);
  };
  auto to_mem = [&](std::size_t i, llvm::Value* v) { return v->getType()->isIntegerTy(1) ? b_.CreateZExt(v, mem_types[i]) : v; };
  auto from_mem = [&](std::size_t i, llvm::Value* v) {
    return op.operands[i]->type.dtype == DType::I1 ? b_.CreateTrunc(v, b_.getInt1Ty()) : v;
  };

  for (std::size_t i = 0; i < n; ++i) {
    const Elems& in = get(op.operands[i]);
    for (I k = 0; k < static_cast<I>(in.size()); ++k) b_.CreateStore(to_mem(i, in[k]), elem_ptr(i, element_linear_index(t, k)));
  }
  target_.barrier(b_);

  // One thread per line: for (line = tid; line < lines; line += threads) scan it in place.
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx_, "scan.line", fn_);
  auto* body = llvm::BasicBlock::Create(ctx_, "scan.body", fn_);
  auto* done = llvm::BasicBlock::Create(ctx_, "scan.done", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* line = b_.CreatePHI(b_.getInt32Ty(), 2);
  line->addIncoming(tid_, pre);
  b_.CreateCondBr(b_.CreateICmpULT(line, b_.getInt32(static_cast<std::uint32_t>(lines))), body, done);
  b_.SetInsertPoint(body);
  // line -> (outer, inner) -> first element index; the axis stride is `inner`.
  llvm::Value* outer = b_.CreateUDiv(line, b_.getInt32(static_cast<std::uint32_t>(inner)));
  llvm::Value* in_i = b_.CreateURem(line, b_.getInt32(static_cast<std::uint32_t>(inner)));
  llvm::Value* start = b_.CreateAdd(b_.CreateMul(outer, b_.getInt32(static_cast<std::uint32_t>(len * inner))), in_i);
  auto index_at = [&](llvm::Value* step) {
    llvm::Value* k = reverse ? b_.CreateSub(b_.getInt32(static_cast<std::uint32_t>(len - 1)), step) : step;
    return b_.CreateAdd(start, b_.CreateMul(k, b_.getInt32(static_cast<std::uint32_t>(inner))));
  };
  std::vector<llvm::Value*> first;
  for (std::size_t i = 0; i < n; ++i) first.push_back(from_mem(i, b_.CreateLoad(mem_types[i], elem_ptr(i, index_at(b_.getInt32(0))))));
  // An inner loop over the line, so that the combine region is emitted once.
  llvm::BasicBlock* line_entry = b_.GetInsertBlock();
  auto* step_head = llvm::BasicBlock::Create(ctx_, "scan.step", fn_);
  auto* step_body = llvm::BasicBlock::Create(ctx_, "scan.step.body", fn_);
  auto* line_latch = llvm::BasicBlock::Create(ctx_, "scan.latch", fn_);
  b_.CreateBr(step_head);
  b_.SetInsertPoint(step_head);
  llvm::PHINode* step = b_.CreatePHI(b_.getInt32Ty(), 2);
  step->addIncoming(b_.getInt32(1), line_entry);
  std::vector<llvm::PHINode*> running;
  for (std::size_t i = 0; i < n; ++i) {
    running.push_back(b_.CreatePHI(first[i]->getType(), 2));
    running.back()->addIncoming(first[i], line_entry);
  }
  b_.CreateCondBr(b_.CreateICmpULT(step, b_.getInt32(static_cast<std::uint32_t>(len))), step_body, line_latch);
  b_.SetInsertPoint(step_body);
  llvm::Value* idx = index_at(step);
  std::vector<llvm::Value*> next, prev(running.begin(), running.end());
  for (std::size_t i = 0; i < n; ++i) next.push_back(from_mem(i, b_.CreateLoad(mem_types[i], elem_ptr(i, idx))));
  std::vector<llvm::Value*> combined = combine(op, prev, next);
  for (std::size_t i = 0; i < n; ++i) b_.CreateStore(to_mem(i, combined[i]), elem_ptr(i, idx));
  llvm::BasicBlock* step_end = b_.GetInsertBlock();
  step->addIncoming(b_.CreateAdd(step, b_.getInt32(1)), step_end);
  for (std::size_t i = 0; i < n; ++i) running[i]->addIncoming(combined[i], step_end);
  b_.CreateBr(step_head);
  b_.SetInsertPoint(line_latch);
  line->addIncoming(b_.CreateAdd(line, b_.getInt32(static_cast<std::uint32_t>(num_threads_))), b_.GetInsertBlock());
  b_.CreateBr(header);
  b_.SetInsertPoint(done);
  target_.barrier(b_);
  for (std::size_t i = 0; i < n; ++i) {
    Elems out;
    for (I k = 0; k < analysis::distribute(op.result(static_cast<int>(i))->type).num_slots(); ++k)
      out.push_back(from_mem(i, b_.CreateLoad(mem_types[i], elem_ptr(i, element_linear_index(op.result(static_cast<int>(i))->type, k)))));
    set(op.result(static_cast<int>(i)), std::move(out));
  }
  scratch_done(op);
}

}  // namespace tessera::lower

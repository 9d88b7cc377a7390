// reduce lowering, and the pieces it shares with the scan (lower_scan.cpp).
//
// reduce, in three levels (as Triton does): (1) each thread combines the slots it owns along the
// axis; (2) lanes that hold other positions along the axis combine through butterfly shuffles;
// (3) warps that hold other positions along the axis combine through shared memory. Positions a
// layout replicates (a shape smaller than the layout's CTA tile) are combined once: the shuffle
// and warp steps only span the distinct positions. Every thread ends with the full result, which
// is what the result's slice layout says.
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

llvm::Value* KernelLowering::shuffle_any(llvm::Value* v, const std::function<llvm::Value*(llvm::Value*)>& shuffle32) {
  // Shuffles move 32 bits: narrower values widen, 64-bit ones travel as two halves.
  llvm::Type* t = v->getType();
  const llvm::DataLayout& dl = module_->getDataLayout();
  const unsigned bits = static_cast<unsigned>(dl.getTypeSizeInBits(t));
  llvm::Type* int_t = b_.getIntNTy(bits);
  llvm::Value* as_int = t->isPointerTy() ? b_.CreatePtrToInt(v, int_t) : b_.CreateBitCast(v, int_t);
  llvm::Value* out;
  if (bits <= 32) {
    out = b_.CreateTrunc(shuffle32(b_.CreateZExt(as_int, b_.getInt32Ty())), int_t);
  } else {
    llvm::Value* lo = shuffle32(b_.CreateTrunc(as_int, b_.getInt32Ty()));
    llvm::Value* hi = shuffle32(b_.CreateTrunc(b_.CreateLShr(as_int, 32), b_.getInt32Ty()));
    out = b_.CreateOr(b_.CreateZExt(lo, int_t), b_.CreateShl(b_.CreateZExt(hi, int_t), 32));
  }
  return t->isPointerTy() ? b_.CreateIntToPtr(out, t) : b_.CreateBitCast(out, t);
}

llvm::Value* KernelLowering::shuffle_xor_any(llvm::Value* v, int lane_mask) {
  return shuffle_any(v, [&](llvm::Value* v32) { return target_.shuffle_xor(b_, v32, lane_mask); });
}

namespace {
// The coordinate along dim d of `id` split over `sizes` along the layout's order (fastest first),
// emitted in the prologue: a warp id over warps_per_cta, or a lane id over threads_per_warp.
llvm::Value* coordinate(llvm::IRBuilder<>& pb, llvm::Value* id, const std::vector<int>& sizes,
                        const std::vector<int>& order, int d) {
  for (int o : order) {
    if (o == d) return pb.CreateURem(id, pb.getInt32(static_cast<std::uint32_t>(sizes[o])));
    id = pb.CreateUDiv(id, pb.getInt32(static_cast<std::uint32_t>(sizes[o])));
  }
  throw InternalError("layout coordinate: dim not in the layout's order");
}
}  // namespace

llvm::Value* KernelLowering::warp_id() {
  if (!warp_id_) {  // from this epoch's thread id, where it dominates what follows (start_index_epoch)
    llvm::IRBuilder<> pb(ctx_);
    position_for_indices(pb);
    warp_id_ = target_.shuffle_idx(pb, pb.CreateUDiv(tid_, pb.getInt32(target_.warp_size())), pb.getInt32(0));
    // Index arithmetic placed after the head from now on may use it (placed right after the
    // thread id, it would precede the warp id's definition).
    if (auto* inst = llvm::dyn_cast<llvm::Instruction>(warp_id_); inst && epoch_head_) epoch_head_ = inst;
  }
  return warp_id_;
}

llvm::Value* KernelLowering::warp_coord(const ir::Layout& l, int d) {
  llvm::Value* warp = warp_id();
  llvm::IRBuilder<> pb(ctx_);
  position_for_indices(pb);
  return coordinate(pb, warp, l.warps_per_cta, l.order, d);
}

llvm::Value* KernelLowering::lane_coord(const ir::Layout& l, int d) {
  llvm::IRBuilder<> pb(ctx_);
  position_for_indices(pb);
  return coordinate(pb, pb.CreateURem(tid_, pb.getInt32(target_.warp_size())), l.threads_per_warp, l.order, d);
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
  const I shape_a = dist.shape[axis];
  const I distinct_lanes = analysis::lanes_along_axis(in_t, axis);
  const I stride = analysis::lane_stride(l, axis);
  for (I step = 1; step < distinct_lanes; step *= 2)
    for (auto& a : acc) {
      std::vector<llvm::Value*> other;
      for (auto* v : a) other.push_back(shuffle_xor_any(v, static_cast<int>(step * stride)));
      a = combine(op, a, other);
    }

  // (3) Across warps, through shared memory: per operand (analysis::operand_parts), [warp
  // position][output element].
  const I distinct_warps = analysis::warps_along_axis(in_t, axis);
  const ir::Type& out_t = op.result()->type;
  if (distinct_warps > 1) {
    const I out_numel = in_t.numel() / shape_a;
    llvm::Value* wa = warp_coord(l, axis);
    // Row-major index of each output element: output slot o is slot o of the result, whose slice
    // layout spreads the output exactly as the operand's layout with the axis collapsed.
    std::vector<llvm::Value*> lins;
    for (I o = 0; o < num_out; ++o) lins.push_back(out_t.is_tile() ? element_linear_index(out_t, o) : b_.getInt32(0));
    const std::vector<I> operand_base = analysis::operand_parts(op, distinct_warps * out_numel).base;
    auto slot_ptr = [&](std::size_t i, llvm::Value* warp, llvm::Value* lin, llvm::Type* elem) {
      llvm::Value* base = b_.CreateGEP(b_.getInt8Ty(), scratch(op), b_.getInt32(static_cast<std::uint32_t>(operand_base[i])));
      llvm::Value* idx = b_.CreateAdd(b_.CreateMul(warp, b_.getInt32(static_cast<std::uint32_t>(out_numel))), lin);
      return b_.CreateGEP(elem, base, idx);
    };
    llvm::Value* wa_distinct = b_.CreateURem(wa, b_.getInt32(static_cast<std::uint32_t>(distinct_warps)));
    shared_phase(op, 0);
    for (I o = 0; o < num_out; ++o)
      for (std::size_t i = 0; i < n; ++i) {
        llvm::Value* v = acc[o][i];
        llvm::Type* elem = v->getType()->isIntegerTy(1) ? b_.getInt8Ty() : v->getType();
        if (v->getType()->isIntegerTy(1)) v = b_.CreateZExt(v, elem);
        b_.CreateStore(v, slot_ptr(i, wa_distinct, lins[o], elem));
      }
    shared_phase(op, 1);
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
  }

  for (std::size_t i = 0; i < n; ++i) {
    Elems out;
    for (I o = 0; o < num_out; ++o) out.push_back(acc[o][i]);
    set(op.result(static_cast<int>(i)), std::move(out));
  }
}

}  // namespace tessera::lower

// reshape, trans, join, split and gather: ops that send elements to other positions, hence to other
// threads. Like convert_layout they go through shared memory: every thread writes the elements it
// owns, then every thread reads the elements its result slots need (barriers where the shared
// memory plan puts them). One index space per op keeps the addressing simple:
//   reshape, trans, split, gather: the (first) operand's row-major index;   join: the result's.
#include <fmt/format.h>

#include "jit/lower/lowering.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
using ir::DType;
using ir::Op;
using ir::OpKind;
using I = std::int64_t;

std::vector<llvm::Value*> KernelLowering::element_coords(const ir::Type& t, I k) {
  if (!t.is_tile()) return {};  // a scalar is element 0 of nothing: its row-major index is 0
  auto dist = analysis::distribute(t);
  const auto& base = thread_base(t);
  auto c = dist.slot_coords(k);
  std::vector<llvm::Value*> coords;
  for (int d = 0; d < static_cast<int>(dist.shape.size()); ++d) {
    if (d == dist.slice_dim) continue;  // the parent's extra dim of size 1 is not the value's
    // (base + offset) mod S, S a power of two: replicated threads wrap onto the same elements.
    coords.push_back(b_.CreateAnd(b_.CreateAdd(base[d], b_.getInt32(static_cast<std::uint32_t>(dist.offset(d, c[d])))),
                                  b_.getInt32(static_cast<std::uint32_t>(dist.shape[d] - 1))));
  }
  return coords;
}

namespace {

// Row-major index of `coords` in `shape` (i32: a tile fits in shared memory).
llvm::Value* linear(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& coords, const std::vector<I>& shape) {
  llvm::Value* lin = b.getInt32(0);
  for (std::size_t d = 0; d < coords.size(); ++d)
    lin = b.CreateAdd(b.CreateMul(lin, b.getInt32(static_cast<std::uint32_t>(shape[d]))), coords[d]);
  return lin;
}

}  // namespace

void KernelLowering::lower_shape_op(const Op& op) {
  const ir::Type& first = op.result()->type;
  // Memory holds a bool as a byte, as loads and stores do.
  const bool is_bool = first.dtype == DType::I1;
  llvm::Type* elem = is_bool ? b_.getInt8Ty() : scalar_type(first.element());
  // Index (..., k) of a last dim of 2, from the row-major index of (...).
  auto interleave = [&](llvm::Value* lin, int k) {
    return b_.CreateAdd(b_.CreateMul(lin, b_.getInt32(2)), b_.getInt32(static_cast<std::uint32_t>(k)));
  };

  // Write: join interleaves its operands ([..., k] = operand k); the others write in place.
  shared_phase(op, 0);
  const int written = op.kind == OpKind::Gather ? 1 : static_cast<int>(op.operands.size());  // gather: src only
  for (int i = 0; i < written; ++i) {
    const ir::Type& t = op.operands[i]->type;
    const Elems& in = get(op.operands[i]);
    for (I k = 0; k < static_cast<I>(in.size()); ++k) {
      llvm::Value* lin = linear(b_, element_coords(t, k), t.shape);
      llvm::Value* at = op.kind == OpKind::Join ? interleave(lin, i) : lin;
      llvm::Value* v = is_bool ? b_.CreateZExt(in[k], elem) : in[k];
      b_.CreateStore(v, b_.CreateGEP(elem, scratch(op), at));
    }
  }
  shared_phase(op, 1);

  // Read: each result slot computes where its element was written.
  const ir::Type& src_t = op.operands[0]->type;
  for (int r = 0; r < static_cast<int>(op.results.size()); ++r) {
    const ir::Type& t = op.result(r)->type;
    const I slots = t.is_tile() ? analysis::distribute(t).num_slots() : 1;
    Elems out;
    for (I k = 0; k < slots; ++k) {
      auto c = element_coords(t, k);
      llvm::Value* at = nullptr;
      switch (op.kind) {
        case OpKind::Trans: {
          // Result dim i is operand dim order[i].
          const auto& order = std::get<std::vector<I>>(op.attrs.at("order"));
          std::vector<llvm::Value*> src(c.size());
          for (std::size_t d = 0; d < c.size(); ++d) src[static_cast<std::size_t>(order[d])] = c[d];
          at = linear(b_, src, src_t.shape);
          break;
        }
        case OpKind::Split: at = interleave(linear(b_, c, t.shape), r); break;
        case OpKind::Gather: {
          // The index beside this slot (same layout), taken mod the axis length: never outside the tile.
          const auto axis = static_cast<std::size_t>(op.int_attr("axis"));
          const bool uns = ir::is_unsigned(op.operands[1]->type.dtype);
          llvm::Value* idx = b_.CreateIntCast(get(op.operands[1])[static_cast<std::size_t>(k)], b_.getInt32Ty(), !uns);
          c[axis] = b_.CreateAnd(idx, b_.getInt32(static_cast<std::uint32_t>(src_t.shape[axis] - 1)));
          at = linear(b_, c, src_t.shape);
          break;
        }
        default: at = linear(b_, c, t.shape); break;  // reshape (same row-major order), join
      }
      llvm::Value* v = b_.CreateLoad(elem, b_.CreateGEP(elem, scratch(op), at));
      out.push_back(is_bool ? b_.CreateTrunc(v, b_.getInt1Ty()) : v);
    }
    set(op.result(r), std::move(out));
  }
}

}  // namespace tessera::lower

// reshape, trans {order}, join, split and gather: ops that move elements without changing them, so they
// copy raw bytes and never look at the element type.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <variant>

#include "jit/interp/ops.hpp"

namespace tessera::interp {
namespace {
using ir::OpKind;
using I = std::int64_t;

void copy_elem(Tile& dst, I di, const Tile& src, I si) {
  const int eb = src.elem_bytes();
  std::memcpy(dst.raw() + di * eb, src.raw() + si * eb, eb);
}

void check_result(const ir::Op& op, const Tile& in, const ir::Type& rt) {
  if (in.dtype() != rt.dtype) internal_error(op, "result element type differs from the operand's");
}

Tile reshape(const ir::Op& op, const Tile& in) {
  const ir::Type& rt = op.result()->type;
  check_result(op, in, rt);
  if (rt.numel() != in.numel()) internal_error(op, fmt::format("reshape of {} elements to {}", in.numel(), ir::to_string(rt)));
  Tile out = in;  // the row-major order is the same: only the shape changes
  out.reshape(rt.shape);
  return out;
}

// Result dim i is operand dim order[i]: walk the result in row-major order with the operand's
// strides permuted.
Tile trans(const ir::Op& op, const Tile& in) {
  const ir::Type& rt = op.result()->type;
  check_result(op, in, rt);
  auto it = op.attrs.find("order");
  if (it == op.attrs.end() || !std::holds_alternative<std::vector<I>>(it->second))
    internal_error(op, "trans without an integer list attribute 'order'");
  const auto& order = std::get<std::vector<I>>(it->second);
  const int rank = static_cast<int>(rt.shape.size());
  if (static_cast<int>(order.size()) != rank || static_cast<int>(in.shape().size()) != rank)
    internal_error(op, fmt::format("trans order [{}] for {}", fmt::join(order, ", "), ir::to_string(rt)));
  const auto in_strides = row_major_strides(in.shape());
  std::vector<I> src_stride(rank);
  for (int i = 0; i < rank; ++i) {
    if (rt.shape[i] != in.shape()[order[i]]) internal_error(op, "trans result shape does not follow its order");
    src_stride[i] = in_strides[order[i]];
  }
  Tile out(rt);
  std::vector<I> idx(rank, 0);
  I src = 0;
  for (I i = 0; i < out.numel(); ++i) {
    copy_elem(out, i, in, src);
    for (int d = rank - 1; d >= 0; --d) {  // odometer, last dim fastest
      src += src_stride[d];
      if (++idx[d] < rt.shape[d]) break;
      src -= src_stride[d] * rt.shape[d];
      idx[d] = 0;
    }
  }
  return out;
}

// [..., k] = operand k: in row-major order the two operands interleave.
Tile join(const ir::Op& op, const Tile& a, const Tile& b) {
  const ir::Type& rt = op.result()->type;
  check_result(op, a, rt);
  if (b.dtype() != a.dtype() || b.shape() != a.shape() || rt.numel() != 2 * a.numel())
    internal_error(op, "join operands differ or do not fit the result");
  Tile out(rt);
  for (I i = 0; i < a.numel(); ++i) {
    copy_elem(out, 2 * i, a, i);
    copy_elem(out, 2 * i + 1, b, i);
  }
  return out;
}

std::vector<Tile> split(const ir::Op& op, const Tile& in) {
  if (in.shape().empty() || in.shape().back() != 2) internal_error(op, "split of a tile whose last dim is not 2");
  std::vector<Tile> out;
  for (int k = 0; k < 2; ++k) {
    const ir::Type& rt = op.result(k)->type;
    check_result(op, in, rt);
    if (2 * rt.numel() != in.numel()) internal_error(op, "split result does not hold half the operand");
    Tile r(rt);
    for (I i = 0; i < r.numel(); ++i) copy_elem(r, i, in, 2 * i + k);
    out.push_back(std::move(r));
  }
  return out;
}

// result[.., i, ..] = src[.., index[.., i, ..], ..] along axis; an index out of range is the
// program's error (compiled code would read it mod the axis length: ops.def).
Tile gather(const ir::Op& op, const Tile& src, const Tile& index) {
  const ir::Type& rt = op.result()->type;
  check_result(op, src, rt);
  const auto axis = static_cast<std::size_t>(op.int_attr("axis"));
  const std::vector<I>& shape = index.shape();
  const std::vector<I> src_strides = row_major_strides(src.shape()), idx_strides = row_major_strides(shape);
  const I n = src.shape().at(axis);
  Tile out(rt);
  for (I i = 0; i < out.numel(); ++i) {
    const I at = int_element(index, i);
    if (at < 0 || at >= n)
      throw ProgramError(fmt::format("gather at {}: index {} at position {} is outside [0, {}) along axis {}",
                                     op.loc.str(), at, i, n, axis));
    I si = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const I coord = i / idx_strides[d] % shape[d];
      si += (d == axis ? at : coord) * src_strides[d];
    }
    copy_elem(out, i, src, si);
  }
  return out;
}

}  // namespace

std::vector<Tile> eval_reshape_family(const ir::Op& op, const std::vector<const Tile*>& operands) {
  switch (op.kind) {
    case OpKind::Reshape: return {reshape(op, *operands.at(0))};
    case OpKind::Trans: return {trans(op, *operands.at(0))};
    case OpKind::Join: return {join(op, *operands.at(0), *operands.at(1))};
    case OpKind::Split: return split(op, *operands.at(0));
    case OpKind::Gather: return {gather(op, *operands.at(0), *operands.at(1))};
    default: internal_error(op, "not reshape, trans, join or split");
  }
}

}  // namespace tessera::interp

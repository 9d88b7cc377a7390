// Source ops (constant, program_id, num_programs, arange), shape ops and select.
#include <fmt/format.h>

#include <cstring>
#include <variant>

#include "jit/interp/ops.hpp"

namespace tessera::interp {
namespace {
using ir::OpKind;

// Every element of `t` set to its element 0.
void replicate_first(Tile& t) {
  const int eb = t.elem_bytes();
  for (std::int64_t i = 1; i < t.numel(); ++i) std::memcpy(t.raw() + i * eb, t.raw(), eb);
}

Tile constant(const ir::Op& op) {
  Tile out(op.result()->type);
  auto it = op.attrs.find("value");
  if (it == op.attrs.end()) internal_error(op, "constant without a 'value' attribute");
  if (out.numel() == 0) return out;
  if (const auto* i = std::get_if<std::int64_t>(&it->second))
    set_from_int(out, 0, *i);
  else if (const auto* d = std::get_if<double>(&it->second))
    set_from_double(out, 0, *d);
  else
    internal_error(op, "constant whose 'value' is neither an integer nor a float");
  replicate_first(out);
  return out;
}

int axis_attr(const ir::Op& op) {
  const std::int64_t axis = op.int_attr("axis");
  if (axis < 0 || axis > 2) internal_error(op, fmt::format("axis {} (must be 0, 1 or 2)", axis));
  return static_cast<int>(axis);
}

Tile arange(const ir::Op& op) {
  Tile out(op.result()->type);
  const std::int64_t start = op.int_attr("start"), end = op.int_attr("end");
  if (out.shape().size() != 1 || end - start != out.numel() || !ir::is_int(out.dtype()))
    internal_error(op, fmt::format("arange {}..{} gives {}", start, end, ir::to_string(op.result()->type)));
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!is_float_storage_v<T>) {
      T* o = out.data<T>();
      for (std::int64_t i = 0; i < out.numel(); ++i) o[i] = static_cast<T>(start + i);
    }
  });
  return out;
}

// dst[i] = src[offset of i], where a broadcast dim (size 1 in the source) has source stride 0.
template <class E>
void broadcast_copy(const E* src, E* dst, const std::vector<std::int64_t>& out_shape,
                    const std::vector<std::int64_t>& src_strides, std::int64_t n) {
  const int rank = static_cast<int>(out_shape.size());
  std::vector<std::int64_t> idx(rank, 0);
  std::int64_t off = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    dst[i] = src[off];
    for (int d = rank - 1; d >= 0; --d) {  // odometer increment, last dim fastest (row-major)
      off += src_strides[d];
      if (++idx[d] < out_shape[d]) break;
      off -= src_strides[d] * out_shape[d];
      idx[d] = 0;
    }
  }
}

Tile broadcast(const ir::Op& op, const Tile& in) {
  const ir::Type& rt = op.result()->type;
  if (in.shape().size() != rt.shape.size())
    internal_error(op, fmt::format("broadcast from rank {} to rank {}", in.shape().size(), rt.shape.size()));
  const int rank = rt.rank();
  std::vector<std::int64_t> strides(rank, 0);
  std::int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    const std::int64_t s = in.shape()[d];
    if (s != rt.shape[d] && s != 1)
      internal_error(op, fmt::format("broadcast of dim {} from {} to {}", d, s, rt.shape[d]));
    strides[d] = (s == 1) ? 0 : stride;
    stride *= s;
  }
  Tile out(rt);
  switch (in.elem_bytes()) {
    case 1: broadcast_copy(in.data<std::uint8_t>(), out.data<std::uint8_t>(), rt.shape, strides, out.numel()); break;
    case 2: broadcast_copy(in.data<std::uint16_t>(), out.data<std::uint16_t>(), rt.shape, strides, out.numel()); break;
    case 4: broadcast_copy(in.data<std::uint32_t>(), out.data<std::uint32_t>(), rt.shape, strides, out.numel()); break;
    case 8: broadcast_copy(in.data<std::uint64_t>(), out.data<std::uint64_t>(), rt.shape, strides, out.numel()); break;
    default: internal_error(op, fmt::format("elements of {} bytes", in.elem_bytes()));
  }
  return out;
}

}  // namespace

Tile eval_source(const ir::Op& op, const ProgramPoint& p) {
  switch (op.kind) {
    case OpKind::Constant: return constant(op);
    case OpKind::ProgramId:
    case OpKind::NumPrograms: {
      const int axis = axis_attr(op);
      Tile out(op.result()->type);
      const std::int64_t v = op.kind == OpKind::ProgramId ? p.id[axis] : std::int64_t{p.grid[axis]};
      for (std::int64_t i = 0; i < out.numel(); ++i) set_from_int(out, i, v);
      return out;
    }
    case OpKind::Arange: return arange(op);
    default: internal_error(op, "not a source op");
  }
}

Tile eval_shape(const ir::Op& op, const Tile& in) {
  const ir::Type& rt = op.result()->type;
  if (in.dtype() != rt.dtype) internal_error(op, "result element type differs from the operand's");
  switch (op.kind) {
    case OpKind::Splat: {
      if (in.numel() != 1) internal_error(op, "splat of a tile (a scalar is expected)");
      Tile out(rt);
      if (out.numel() > 0) {
        std::memcpy(out.raw(), in.raw(), in.elem_bytes());
        replicate_first(out);
      }
      return out;
    }
    case OpKind::Broadcast: return broadcast(op, in);
    case OpKind::ExpandDims:
    case OpKind::ConvertLayout: {
      Tile out = in;  // the same elements in the same row-major order
      out.reshape(rt.shape);
      return out;
    }
    default: internal_error(op, "not a shape op");
  }
}

Tile eval_select(const ir::Op& op, const Tile& cond_in, const Tile& a_in, const Tile& b_in) {
  const ir::Type& rt = op.result()->type;
  if (cond_in.dtype() != DType::I1) internal_error(op, "select condition is not i1");
  if (a_in.dtype() != rt.dtype || b_in.dtype() != rt.dtype) internal_error(op, "select operands differ from the result type");
  Tile sc, sa, sb;
  const Tile& c = as_shape(cond_in, rt.shape, sc, op);
  const Tile& a = as_shape(a_in, rt.shape, sa, op);
  const Tile& b = as_shape(b_in, rt.shape, sb, op);
  Tile out(rt);
  visit_dtype(rt.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* cp = c.data<std::uint8_t>();
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    T* o = out.data<T>();
    for (std::int64_t i = 0; i < out.numel(); ++i) o[i] = cp[i] ? x[i] : y[i];
  });
  return out;
}

}  // namespace tessera::interp

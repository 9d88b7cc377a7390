// reduce and scan in the interpreter: elements combined left to right along the axis (right to
// left for a reverse scan), the combine region run on scalars; the common single-op combines
// (add, mul, min, max of the two arguments) take a direct loop instead.
#include "jit/interp/reduce.hpp"

#include <cstring>

#include "jit/interp/ops.hpp"

namespace tessera::interp {
namespace {

struct AxisSplit {
  std::int64_t outer = 1, len = 1, inner = 1;
};

AxisSplit split_at(const std::vector<std::int64_t>& shape, std::int64_t axis) {
  AxisSplit s;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
    if (d < axis) s.outer *= shape[d];
    else if (d == axis) s.len = shape[d];
    else s.inner *= shape[d];
  }
  return s;
}

Tile element_of(const Tile& t, std::int64_t i) {
  Tile e(t.dtype(), t.pointee(), {});
  std::memcpy(e.raw(), t.raw() + i * t.elem_bytes(), static_cast<std::size_t>(t.elem_bytes()));
  return e;
}

void put_element(Tile& t, std::int64_t i, const Tile& e) {
  std::memcpy(t.raw() + i * t.elem_bytes(), e.raw(), static_cast<std::size_t>(t.elem_bytes()));
}

// The combine op when the region is `yield op(lhs0, rhs0)` for one binary op, else null.
const ir::Op* single_binary_combine(const ir::Op& op) {
  const ir::Block& body = *op.regions[0]->block;
  if (op.operands.size() != 1 || body.ops.size() != 2) return nullptr;
  const ir::Op& c = *body.ops[0];
  if (c.info().category != ir::OpCategory::Binary || body.ops[1]->operands.at(0) != c.result()) return nullptr;
  const bool args_in_order = c.operands[0] == body.args[0].get() && c.operands[1] == body.args[1].get();
  return args_in_order ? &c : nullptr;
}

}  // namespace

std::vector<Tile> eval_reduce(const ir::Op& op, const std::vector<const Tile*>& inputs, const RegionRunner& run_region) {
  const bool scan = op.kind == ir::OpKind::Scan;
  const bool reverse = scan && op.has_attr("reverse") && op.int_attr("reverse") != 0;
  const std::int64_t axis = op.int_attr("axis");
  const AxisSplit s = split_at(inputs[0]->shape(), axis);
  const std::size_t n = inputs.size();
  std::vector<Tile> out;
  for (std::size_t k = 0; k < n; ++k) out.emplace_back(op.result(static_cast<int>(k))->type);
  const ir::Op* fast = single_binary_combine(op);

  std::vector<Tile> acc(n), args(2 * n);
  for (std::int64_t o = 0; o < s.outer; ++o)
    for (std::int64_t i = 0; i < s.inner; ++i) {
      for (std::int64_t step = 0; step < s.len; ++step) {
        const std::int64_t k = reverse ? s.len - 1 - step : step;
        const std::int64_t src = (o * s.len + k) * s.inner + i;
        if (step == 0) {
          for (std::size_t v = 0; v < n; ++v) acc[v] = element_of(*inputs[v], src);
        } else if (fast) {
          acc[0] = eval_binary(*fast, acc[0], element_of(*inputs[0], src));
        } else {
          for (std::size_t v = 0; v < n; ++v) {
            args[v] = acc[v];
            args[n + v] = element_of(*inputs[v], src);
          }
          acc = run_region(args);
        }
        if (scan)
          for (std::size_t v = 0; v < n; ++v) put_element(out[v], src, acc[v]);
      }
      if (!scan)
        for (std::size_t v = 0; v < n; ++v) put_element(out[v], o * s.inner + i, acc[v]);
    }
  return out;
}

}  // namespace tessera::interp

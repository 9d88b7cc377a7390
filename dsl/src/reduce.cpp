// reduce / scan ops: the combine function is traced once into the op's region, over scalars.
#include <fmt/format.h>

#include <algorithm>

#include "dsl/src/trace_state.hpp"
#include "tessera/reduce.hpp"

namespace tessera::detail {
namespace {

int normalized_axis(const ir::Value* x, int axis, const Loc& loc) {
  const int rank = x->type.rank();
  if (rank == 0) program_error(loc, "reduce/scan needs a tile, got a scalar");
  const int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    program_error(loc, fmt::format("axis {} is out of range for a tile of shape {}", axis, shape_str(x->type.shape)));
  return a;
}

// Runs `combine` inside `block` on fresh scalar arguments and appends the yield.
void trace_combine(TraceState& st, ir::Block* block, const std::vector<ir::Value*>& inputs, const Combine& combine,
                   const Loc& loc) {
  std::vector<ir::Value*> lhs, rhs;
  for (auto* v : inputs) lhs.push_back(block->add_arg(v->type.element()));
  for (auto* v : inputs) rhs.push_back(block->add_arg(v->type.element()));
  open_scope(st, Scope::Kind::Branch, block, to_ir_loc(loc));
  ir::Block* parent = st.builder.block();
  st.builder.set_block(block);
  std::vector<ir::Value*> out;
  try {
    out = combine(lhs, rhs);
  } catch (...) {
    close_scope(st);
    st.builder.set_block(parent);
    throw;
  }
  const bool assigned_outer = !st.scopes.back().assigned.empty();
  close_scope(st);
  if (assigned_outer) {
    st.builder.set_block(parent);
    program_error(loc, "a reduce/scan combine function must not assign variables of the kernel");
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i]->type != inputs[i]->type.element())
      program_error(loc, fmt::format("the combine function returns {}, but the tile's elements are {}",
                                     ir::to_string(out[i]->type), ir::to_string(inputs[i]->type.element())));
  st.builder.create(ir::OpKind::Yield, out, {});
  st.builder.set_block(parent);
}

}  // namespace

std::vector<ir::Value*> trace_reduce(const std::vector<ir::Value*>& inputs, int axis, bool scan, bool reverse,
                                     const Combine& combine, const Loc& loc) {
  TraceState& st = current_state(loc);
  check_region_depth(st, scan ? "scan" : "reduce", loc);
  ir::Builder& b = builder_at(loc);
  const int a = normalized_axis(inputs[0], axis, loc);
  for (auto* v : inputs)
    if (v->type.shape != inputs[0]->type.shape)
      program_error(loc, "reduce/scan operands must have one shape");
  std::vector<ir::Type> result_types;
  for (auto* v : inputs) {
    ir::Type t = v->type;
    t.layout = {};
    if (!scan) t.shape.erase(t.shape.begin() + a);
    result_types.push_back(t);
  }
  std::map<std::string, ir::Attr> attrs{{"axis", std::int64_t{a}}};
  if (scan) attrs["reverse"] = std::int64_t{reverse ? 1 : 0};
  ir::Op* op = b.create(scan ? ir::OpKind::Scan : ir::OpKind::Reduce, inputs, result_types, attrs, 1);
  try {
    trace_combine(st, op->regions[0]->block.get(), inputs, combine, loc);
  } catch (...) {
    std::erase_if(op->parent->ops, [&](const std::unique_ptr<ir::Op>& o) { return o.get() == op; });
    throw;
  }
  std::vector<ir::Value*> results;
  for (auto& r : op->results) results.push_back(r.get());
  return results;
}

ir::Value* trace_arg_reduce(ir::Value* x, int axis, bool is_max, const Loc& loc) {
  const int a = normalized_axis(x, axis, loc);
  // Indices along the axis, broadcast to x's shape.
  const std::int64_t n = x->type.shape[a];
  ir::Value* idx = emit_arange(0, n, loc);
  for (int d = 0; d < x->type.rank(); ++d)
    if (d != a) idx = emit_expand_dims(idx, d < a ? 0 : d, loc);
  idx = emit_broadcast_to(idx, x->type.shape, loc);
  const DType vt = x->type.dtype;
  Combine pick = [&](const std::vector<ir::Value*>& l, const std::vector<ir::Value*>& r) {
    // Take the right pair when its value is strictly better, or equal with a smaller index.
    ir::Value* better = emit_binary(is_max ? BinOp::Gt : BinOp::Lt, r[0], l[0], vt, loc);
    ir::Value* equal = emit_binary(BinOp::Eq, r[0], l[0], vt, loc);
    ir::Value* smaller = emit_binary(BinOp::Lt, r[1], l[1], DType::I32, loc);
    ir::Value* take_r = emit_binary(BinOp::Or, better, emit_binary(BinOp::And, equal, smaller, DType::I1, loc), DType::I1, loc);
    return std::vector<ir::Value*>{emit_select(take_r, r[0], l[0], vt, loc), emit_select(take_r, r[1], l[1], DType::I32, loc)};
  };
  return trace_reduce({x, idx}, a, false, false, pick, loc)[1];
}

}  // namespace tessera::detail

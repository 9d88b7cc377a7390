// The DSL's shape ops as IR: reshape, permute (trans), join, split. Every shape problem is a
// ProgramError naming the user's line, before any IR is built.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string_view>

#include "dsl/src/trace_state.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {
namespace {

using ir::OpKind;

void require_tile(const ir::Value* a, const char* what, const Loc& loc) {
  if (!a->type.is_tile()) program_error(loc, fmt::format("{}: needs a tile, got a scalar", what));
}

}  // namespace

ir::Value* emit_reshape(ir::Value* a, const Shape& shape, const Loc& loc) {
  require_tile(a, "reshape", loc);
  if (shape.empty()) program_error(loc, "reshape: the new shape is empty (a tile has at least one dim)");
  check_tile_shape(shape, fmt::format("reshape of {}", shape_str(a->type.shape)), loc);
  std::int64_t n = 1;
  for (auto d : shape) n *= d;  // at most ir::kMaxTileElements: checked above
  if (n != a->type.numel())
    program_error(loc, fmt::format("reshape of {} ({} elements) to {} ({} elements): the element count must not change",
                                   shape_str(a->type.shape), a->type.numel(), shape_str(shape), n));
  return builder_at(loc).create1(OpKind::Reshape, {a}, a->type.with_shape(shape));
}

ir::Value* emit_permute(ir::Value* a, const std::vector<int>& order, const char* what, const Loc& loc) {
  require_tile(a, what, loc);
  const Shape& from = a->type.shape;
  const int rank = static_cast<int>(from.size());
  if (static_cast<int>(order.size()) != rank) {
    if (std::string_view(what) == "trans")
      program_error(loc, fmt::format("trans of {}: needs a 2-D tile (ts::permute reorders other ranks)", shape_str(from)));
    program_error(loc, fmt::format("permute of {}: the order [{}] must name each of its {} dims once", shape_str(from),
                                   fmt::join(order, ", "), rank));
  }
  std::vector<bool> seen(order.size(), false);
  Shape shape;
  std::vector<std::int64_t> attr;
  for (int d : order) {
    if (d < 0 || d >= rank || seen[d])
      program_error(loc, fmt::format("{} of {}: the order [{}] is not a permutation of 0..{}", what, shape_str(from),
                                     fmt::join(order, ", "), rank - 1));
    seen[d] = true;
    shape.push_back(from[d]);
    attr.push_back(d);
  }
  return builder_at(loc).create1(OpKind::Trans, {a}, a->type.with_shape(shape), {{"order", attr}});
}

ir::Value* emit_join(ir::Value* a, ir::Value* b, const Loc& loc) {
  // The header's signature already makes the element types equal.
  if (a->type.shape != b->type.shape)
    program_error(loc, fmt::format("join of {} and {}: both tiles must have the same shape", shape_str(a->type.shape),
                                   shape_str(b->type.shape)));
  Shape shape = a->type.shape;
  shape.push_back(2);
  check_tile_shape(shape, fmt::format("join of two {}", shape_str(a->type.shape)), loc);
  return builder_at(loc).create1(OpKind::Join, {a, b}, a->type.with_shape(shape));
}

std::pair<ir::Value*, ir::Value*> emit_split(ir::Value* a, const Loc& loc) {
  require_tile(a, "split", loc);
  if (a->type.shape.back() != 2)
    program_error(loc, fmt::format("split of {}: the last dimension must be 2", shape_str(a->type.shape)));
  Shape shape = a->type.shape;
  shape.pop_back();
  const ir::Type half = a->type.with_shape(shape);
  ir::Op* op = builder_at(loc).create(OpKind::Split, {a}, {half, half});
  return {op->result(0), op->result(1)};
}

}  // namespace tessera::detail

namespace tessera::detail {

ir::Value* emit_cat(ir::Value* a, ir::Value* b, const Loc& loc) {
  require_tile(a, "cat", loc);
  if (a->type.shape != b->type.shape)
    program_error(loc, fmt::format("cat of {} and {}: both tiles must have the same shape", shape_str(a->type.shape),
                                   shape_str(b->type.shape)));
  // join gives [d0, ..., dk, 2]; moving the new dim first and merging it with d0 puts all of a
  // before all of b.
  const int rank = static_cast<int>(a->type.shape.size());
  std::vector<int> order{rank};
  for (int d = 0; d < rank; ++d) order.push_back(d);
  Shape shape = a->type.shape;
  shape[0] *= 2;
  return emit_reshape(emit_permute(emit_join(a, b, loc), order, "cat", loc), shape, loc);
}

ir::Value* emit_interleave(ir::Value* a, ir::Value* b, const Loc& loc) {
  require_tile(a, "interleave", loc);
  Shape shape = a->type.shape;
  ir::Value* joined = emit_join(a, b, loc);  // [..., n, 2]: the pairs already in order
  shape.back() *= 2;
  return emit_reshape(joined, shape, loc);
}

ir::Value* emit_ravel(ir::Value* a, const Loc& loc) {
  require_tile(a, "ravel", loc);
  return emit_reshape(a, {a->type.numel()}, loc);
}

ir::Value* emit_gather(ir::Value* src, ir::Value* index, int axis, const Loc& loc) {
  require_tile(src, "gather", loc);
  require_tile(index, "gather", loc);
  const Shape& s = src->type.shape;
  const Shape& ix = index->type.shape;
  const int rank = static_cast<int>(s.size());
  const int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    program_error(loc, fmt::format("gather of {}: axis {} is out of range for a {}-D tile", shape_str(s), axis, rank));
  if (static_cast<int>(ix.size()) != rank)
    program_error(loc, fmt::format("gather: the index {} must have the rank of src {}", shape_str(ix), shape_str(s)));
  for (int d = 0; d < rank; ++d)
    if (d != a && ix[static_cast<std::size_t>(d)] != s[static_cast<std::size_t>(d)])
      program_error(loc, fmt::format("gather along axis {}: the index {} differs from src {} in dim {}; only the axis "
                                     "may differ", a, shape_str(ix), shape_str(s), d));
  return builder_at(loc).create1(ir::OpKind::Gather, {src, index}, src->type.with_shape(ix), {{"axis", std::int64_t{a}}});
}

// Reversing an index of k bits complements each bit, and complementing bit j swaps the two halves
// of a [A, 2, B] view of x (A the dims before and the higher bits, B the lower bits and the dims
// after): one split and a swapped join per bit, the pair moved last and back when B > 1.
ir::Value* emit_flip(ir::Value* a, int dim, const Loc& loc) {
  require_tile(a, "flip", loc);
  const Shape shape = a->type.shape;
  const int rank = static_cast<int>(shape.size());
  const int d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank)
    program_error(loc, fmt::format("flip of {}: dim {} is out of range for a {}-D tile", shape_str(shape), dim, rank));
  std::int64_t outer = 1, inner = 1;
  for (int i = 0; i < d; ++i) outer *= shape[static_cast<std::size_t>(i)];
  for (int i = d + 1; i < rank; ++i) inner *= shape[static_cast<std::size_t>(i)];
  const std::int64_t n = shape[static_cast<std::size_t>(d)];  // a power of two (tile shapes are)
  ir::Value* x = a;
  for (std::int64_t low = 1; low < n; low *= 2) {  // the bit of weight `low`
    const std::int64_t A = outer * (n / (2 * low)), B = low * inner;
    if (B == 1) {
      auto [p, q] = emit_split(emit_reshape(x, {A, 2}, loc), loc);
      x = emit_join(q, p, loc);
    } else {
      ir::Value* pairs_last = emit_permute(emit_reshape(x, {A, 2, B}, loc), {0, 2, 1}, "flip", loc);
      auto [p, q] = emit_split(pairs_last, loc);
      x = emit_permute(emit_join(q, p, loc), {0, 2, 1}, "flip", loc);
    }
  }
  return x == a ? a : emit_reshape(x, shape, loc);
}

}  // namespace tessera::detail

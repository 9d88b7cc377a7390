#include "jit/transforms/loop_iterations.hpp"

#include <cstdint>
#include <unordered_set>

#include "jit/transforms/rewrite.hpp"

namespace tessera::transforms {
using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {

// Whether `op` can be rebuilt for another iteration: a pure op of one result and no regions.
bool clonable(const Op& op) {
  if (!op.regions.empty() || op.results.size() != 1) return false;
  switch (op.info().category) {
    case ir::OpCategory::Memory:
    case ir::OpCategory::Control: return false;
    default: return true;
  }
}

Value* map_of(const std::unordered_map<const Value*, Value*>& map, Value* v) {
  auto it = map.find(v);
  return it == map.end() ? v : it->second;
}

}  // namespace

std::vector<std::unique_ptr<Op>>::iterator position_of(ir::Block& block, const Op* op) {
  return block.ops.begin() + static_cast<std::ptrdiff_t>(index_in_block(*op));
}

Value* allocate_at_top_level(Op& inside, const ir::Type& t, const ir::SourceLoc& loc) {
  Op* top = &inside;
  while (ir::parent_op(*top)) top = ir::parent_op(*top);
  ir::Block scratch;
  ir::Builder b(&scratch);
  b.set_loc(loc);
  Value* buffer = b.create1(OpKind::LocalAlloc, {}, t);
  splice(scratch, *top->parent, position_of(*top->parent, top));
  return buffer;
}

ir::Type in_shared_memory(ir::Type t) {
  t.layout = {};  // a buffer has an encoding (the layout pass's), no register layout
  t.shared = true;
  return t;
}

ir::Type stage_type(const Op& load) { return in_shared_memory(load.result()->type); }

// The ops of the body `load` depends on, in body order; false when one cannot be recomputed
// for another iteration (it depends on a carried value, or is not a pure op).
bool LoopIterations::slice_of(const Op& load) {
  std::unordered_set<const Op*> in{&load};
  bool ok = true;
  for (auto it = body_.ops.rbegin(); it != body_.ops.rend(); ++it) {
    const Op* op = it->get();
    if (!in.count(op)) continue;
    for (const Value* v : op->operands) {
      if (!v->def && v->owner == &body_ && v->index != 0) ok = false;  // a carried value
      if (v->def && v->def->parent == &body_) {
        if (!clonable(*v->def)) ok = false;
        in.insert(v->def);
      }
    }
  }
  if (!ok) return false;
  slices_[&load].clear();
  for (auto& op : body_.ops)
    if (in.count(op.get()) && op.get() != &load) slices_[&load].push_back(op.get());
  return true;
}

// The pointers, mask (the load's, and `in_range`) and `other` of `load` for induction value `iv`,
// built in `scratch`.
LoopIterations::Access LoopIterations::clone_access(ir::Block& scratch, const Op& load, Value* iv, Value* in_range) {
  ir::Builder b(&scratch);
  std::unordered_map<const Value*, Value*> map{{body_.args[0].get(), iv}};
  for (const Op* op : slices_.at(&load)) {
    b.set_loc(op->loc);
    std::vector<Value*> operands;
    for (Value* v : op->operands) operands.push_back(map_of(map, v));
    map[op->result()] = b.create1(op->kind, operands, op->result()->type, op->attrs);
  }
  b.set_loc(load.loc);
  const ir::Type& t = load.result()->type;
  Value* range = t.is_tile() ? b.create1(OpKind::Splat, {in_range}, ir::Type::scalar(ir::DType::I1).with_shape(t.shape)) : in_range;
  Value* mask = load.operands.size() > 1 ? b.create1(OpKind::And, {map_of(map, load.operands[1]), range}, range->type) : range;
  Value* other = load.operands.size() > 2 ? map_of(map, load.operands[2]) : nullptr;
  return {map_of(map, load.operands[0]), mask, other};
}

// Builds, in `scratch`, the load for induction value `iv`, additionally masked by `in_range`.
Op* LoopIterations::clone_load(ir::Block& scratch, const Op& load, Value* iv, Value* in_range) {
  const Access a = clone_access(scratch, load, iv, in_range);
  ir::Builder b(&scratch);
  b.set_loc(load.loc);
  const ir::Type& t = load.result()->type;
  Value* other = a.other                ? a.other
                 : ir::is_float(t.dtype) ? b.float_constant(t.dtype, 0.0, t.shape)
                                         : b.int_constant(t.dtype, 0, t.shape);
  return b.create1(OpKind::Load, {a.ptr, a.mask, other}, t, load.attrs)->def;
}

// Builds, in `scratch`, the copy of `load`'s tile for induction value `iv` (masked by
// `in_range` as well; masked-off elements land as 0, which the caller checked `other` is) into
// stage `slot` of `buffer`, as one group of its own.
void LoopIterations::clone_copy(ir::Block& scratch, const Op& load, Value* iv, Value* in_range, Value* buffer, Value* slot) {
  const Access a = clone_access(scratch, load, iv, in_range);
  ir::Builder b(&scratch);
  b.set_loc(load.loc);
  Value* view = b.create1(OpKind::SmemIndex, {buffer, slot}, stage_type(load));
  b.create(OpKind::AsyncCopy, {view, a.ptr, a.mask}, {});
  b.create(OpKind::AsyncCommit, {}, {});
}

// iv + j * step as the iv's type (it may wrap: only used where `in range` holds), and whether
// it is below ub: `iv < bound` where the caller computed `bound` before the loop (see
// narrow_bound), else in 64 bits.
std::pair<Value*, Value*> LoopIterations::iteration(ir::Builder& b, Value* iv, int j, Value* bound) {
  Value* step = loop_.operands[2];
  Value* ub = loop_.operands[1];
  const ir::Type i64 = ir::Type::scalar(ir::DType::I64);
  Value* offset = j == 1 ? step : b.create1(OpKind::Mul, {step, b.int_constant(step->type.dtype, j)}, step->type);
  Value* at = j == 0 ? iv : b.create1(OpKind::Add, {iv, offset}, iv->type);
  if (bound) return {at, b.create1(OpKind::CmpLt, {iv, bound}, ir::Type::scalar(ir::DType::I1))};
  Value* wide = b.create1(OpKind::Cast, {iv}, i64);
  if (j != 0)
    wide = b.create1(OpKind::Add, {wide, b.create1(OpKind::Mul, {b.create1(OpKind::Cast, {step}, i64), b.int_constant(ir::DType::I64, j)}, i64)}, i64);
  Value* in_range = b.create1(OpKind::CmpLt, {wide, b.create1(OpKind::Cast, {ub}, i64)}, ir::Type::scalar(ir::DType::I1));
  return {at, in_range};
}

// For an induction variable narrower than 64 bits, the bound B with iv + j * step < ub exactly
// when iv < B: ub - j * step in 64 bits, raised to the type's least value (no iv is below it)
// and narrowed, which is exact as step > 0. Computed once before the loop, so that the loop
// compares two 32-bit registers instead of carrying a 64-bit sum and bound (4 registers beside
// the accumulators, measured in the matmul's K loop). nullptr for 64-bit induction variables.
Value* LoopIterations::narrow_bound(ir::Builder& b, int j) {
  const ir::DType t = loop_.operands[0]->type.dtype;
  if (ir::dtype_bytes(t) >= 8) return nullptr;
  const ir::Type i64 = ir::Type::scalar(ir::DType::I64);
  Value* step = loop_.operands[2];
  Value* ub = loop_.operands[1];
  const std::int64_t least = !ir::is_unsigned(t) ? -(std::int64_t{1} << (8 * ir::dtype_bytes(t) - 1)) : 0;
  Value* wide = b.create1(OpKind::Sub, {b.create1(OpKind::Cast, {ub}, i64),
                                        b.create1(OpKind::Mul, {b.create1(OpKind::Cast, {step}, i64), b.int_constant(ir::DType::I64, j)}, i64)},
                          i64);
  wide = b.create1(OpKind::Max, {wide, b.int_constant(ir::DType::I64, least)}, i64);
  return b.create1(OpKind::Cast, {wide}, loop_.operands[0]->type);
}

// i = (iv - lb) / step, unsigned (iv >= lb, step > 0), as an i32: the stage iteration i reads.
Value* LoopIterations::iteration_count(ir::Builder& b) {
  Value* iv = body_.args[0].get();
  const ir::Type u = ir::Type::scalar(ir::dtype_bytes(iv->type.dtype) >= 8 ? ir::DType::U64 : ir::DType::U32);
  Value* from_lb = b.create1(OpKind::Sub, {iv, loop_.operands[0]}, iv->type);
  Value* quotient = b.create1(OpKind::Div, {b.create1(OpKind::Cast, {from_lb}, u), b.create1(OpKind::Cast, {loop_.operands[2]}, u)}, u);
  return b.create1(OpKind::Cast, {quotient}, ir::Type::scalar(ir::DType::I32));
}

}  // namespace tessera::transforms

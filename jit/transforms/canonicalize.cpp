#include "jit/transforms/canonicalize.hpp"

#include "jit/transforms/fold.hpp"
#include "jit/transforms/rewrite.hpp"

namespace tessera::transforms {
using namespace ir;

namespace {

// The value every element of v holds, when v is a constant (scalar or tile).
const Attr* constant_of(const Value* v) {
  if (!v->def || v->def->kind != OpKind::Constant) return nullptr;
  auto it = v->def->attrs.find("value");
  return it == v->def->attrs.end() ? nullptr : &it->second;
}

bool is_int_constant(const Value* v, std::int64_t x) {
  const Attr* a = constant_of(v);
  return a && is_int(v->type.dtype) && std::holds_alternative<std::int64_t>(*a) && std::get<std::int64_t>(*a) == x;
}

// to_string is the normalized form of a type (it ignores a non-pointer's pointee field).
bool same_type(const Type& a, const Type& b) { return to_string(a) == to_string(b); }

class Canonicalizer {
 public:
  explicit Canonicalizer(Module& m) : m_(m) {}

  // Returns whether anything changed. After a rewrite the op at index i is a new one (or the
  // same op with new operands), so it is looked at again.
  bool block(Block& b) {
    bool changed = false;
    std::size_t i = 0;
    while (i < b.ops.size()) {
      Op& op = *b.ops[i];
      if (rewrite(op)) {
        changed = true;
        continue;
      }
      for (auto& r : op.regions) changed |= block(*r->block);
      ++i;
    }
    return changed;
  }

 private:
  bool rewrite(Op& op) {
    switch (op.info().category) {
      case OpCategory::Binary: return fold_binary_op(op) || binary_identity(op);
      case OpCategory::Compare: return fold_compare_op(op);
      case OpCategory::Unary: return fold_unary_op(op);
      case OpCategory::Shape: return simplify_shape(op);
      default: break;
    }
    if (op.kind == OpKind::Select) return simplify_select(op);
    if (op.kind == OpKind::If) return inline_constant_if(op);
    return false;
  }

  bool replace_with_constant(Op& op, std::optional<Attr> value) {
    if (!value) return false;
    Value* c = constant_before(op, op.result()->type, std::move(*value));
    replace_op(m_, op, {c});
    return true;
  }

  bool replace_with_value(Op& op, Value* v) {
    replace_op(m_, op, {v});
    return true;
  }

  bool fold_binary_op(Op& op) {
    const Attr *a = constant_of(op.operands[0]), *b = constant_of(op.operands[1]);
    if (!a || !b) return false;
    return replace_with_constant(op, fold_binary(op.kind, op.result()->type.dtype, *a, *b));
  }

  // Integer identities only: for floats x+0 and x*0 are not x and 0 (-0.0, NaN, inf).
  bool binary_identity(Op& op) {
    Value *x = op.operands[0], *y = op.operands[1];
    if (!is_int(x->type.dtype)) return false;
    const std::int64_t all_ones = normalize_int(x->type.dtype, -1);  // i1: 1, u8: 255, signed: -1
    bool commutes = op.kind == OpKind::Add || op.kind == OpKind::Mul || op.kind == OpKind::Or ||
                    op.kind == OpKind::Xor || op.kind == OpKind::And;
    for (int side = 0; side < (commutes ? 2 : 1); ++side) {
      Value *v = side ? y : x, *c = side ? x : y;
      switch (op.kind) {
        case OpKind::Add: case OpKind::Sub: case OpKind::Xor: case OpKind::Shl: case OpKind::Shr:
          if (is_int_constant(c, 0)) return replace_with_value(op, v);
          break;
        case OpKind::Mul:
          if (is_int_constant(c, 1)) return replace_with_value(op, v);
          if (is_int_constant(c, 0)) return replace_with_value(op, c);
          break;
        case OpKind::And:
          if (is_int_constant(c, 0)) return replace_with_value(op, c);
          if (is_int_constant(c, all_ones)) return replace_with_value(op, v);
          break;
        case OpKind::Or:
          if (is_int_constant(c, 0)) return replace_with_value(op, v);
          if (is_int_constant(c, all_ones)) return replace_with_value(op, c);
          break;
        default: break;
      }
    }
    return false;
  }

  bool fold_compare_op(Op& op) {
    const Attr *a = constant_of(op.operands[0]), *b = constant_of(op.operands[1]);
    if (!a || !b) return false;
    return replace_with_constant(op, fold_compare(op.kind, op.operands[0]->type.dtype, *a, *b));
  }

  bool fold_unary_op(Op& op) {
    const Attr* a = constant_of(op.operands[0]);
    // A bitcast constant would need the bits of the attr's value in the source type: rare enough
    // to leave to the lowering. An assume stays so that the interpreter still checks its promise.
    // A cast rounding toward zero is left to the lowering too (fold_cast rounds to nearest).
    if (!a || op.kind == OpKind::Bitcast || op.kind == OpKind::Assume || op.has_attr("rounding")) return false;
    if (op.kind == OpKind::Cast)
      return replace_with_constant(op, fold_cast(op.operands[0]->type.dtype, op.result()->type.dtype, *a));
    return replace_with_constant(op, fold_unary(op.kind, op.result()->type.dtype, *a));
  }

  bool simplify_shape(Op& op) {
    // join reads two operands and split gives two results: a constant first operand says nothing
    // of the whole result. (reshape and trans of a constant are that constant.)
    if (op.kind == OpKind::Join || op.kind == OpKind::Split) return false;
    Value* in = op.operands[0];
    if (const Attr* a = constant_of(in)) return replace_with_constant(op, *a);
    bool no_op = op.kind == OpKind::Broadcast || op.kind == OpKind::ConvertLayout;
    if (no_op && same_type(in->type, op.result()->type)) return replace_with_value(op, in);
    if (!in->def) return false;
    if ((op.kind == OpKind::Broadcast && in->def->kind == OpKind::Broadcast) ||
        (op.kind == OpKind::ConvertLayout && in->def->kind == OpKind::ConvertLayout)) {
      op.operands[0] = in->def->operands[0];  // broadcasting in one step gives the same tile
      return true;
    }
    if (op.kind == OpKind::Broadcast && in->def->kind == OpKind::Splat) {
      op.kind = OpKind::Splat;  // splat straight to the broadcast shape
      op.operands[0] = in->def->operands[0];
      return true;
    }
    return false;
  }

  bool simplify_select(Op& op) {
    if (op.operands[1] == op.operands[2]) return replace_with_value(op, op.operands[1]);
    const Attr* c = constant_of(op.operands[0]);
    if (!c || !std::holds_alternative<std::int64_t>(*c)) return false;
    return replace_with_value(op, op.operands[std::get<std::int64_t>(*c) != 0 ? 1 : 2]);
  }

  bool inline_constant_if(Op& op) {
    const Attr* c = constant_of(op.operands[0]);
    if (!c || !std::holds_alternative<std::int64_t>(*c)) return false;
    Block& taken = *op.regions[std::get<std::int64_t>(*c) != 0 ? 0 : 1]->block;
    std::vector<Value*> results = taken.terminator()->operands;
    for (std::size_t i = 0; i + 1 < taken.ops.size(); ++i) insert_before(op, std::move(taken.ops[i]));
    taken.ops.erase(taken.ops.begin(), taken.ops.end() - 1);  // the moved-from slots; keep the yield
    replace_op(m_, op, results);
    return true;
  }

  Module& m_;
};

}  // namespace

void canonicalize(Module& m) {
  Canonicalizer c(m);
  // One sweep folds forward chains; the bound only guards against a rewrite cycle.
  for (int round = 0; round < 16 && c.block(m.entry()); ++round) {
  }
  erase_dead_ops(m, /*include_region_ops=*/false);
}

}  // namespace tessera::transforms

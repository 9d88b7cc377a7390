#include "jit/transforms/legalize_fp8.hpp"

#include <unordered_map>
#include <unordered_set>

#include "jit/transforms/rewrite.hpp"

namespace tessera::transforms {
using ir::DType;
using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {

// A shared buffer (a dot's view) is read where it lies, not cast: only values in registers count.
bool is_fp8_value(const Value* v) { return !v->type.is_ptr() && !v->type.shared && ir::is_fp8(v->type.dtype); }

// An op whose fp8 values are computed on rather than moved.
bool computes(const Op& op) {
  switch (op.info().category) {
    case ir::OpCategory::Binary:
    case ir::OpCategory::Compare: return true;
    case ir::OpCategory::Unary: return op.kind != OpKind::Cast && op.kind != OpKind::Bitcast && op.kind != OpKind::Assume;
    default: return op.kind == OpKind::Fma || op.kind == OpKind::Dot || op.kind == OpKind::Print;
  }
}

Value* convert_before(Op& anchor, Value* v, OpKind kind, DType to) {
  auto op = std::make_unique<Op>();
  op->kind = kind;
  op->operands = {v};
  op->loc = anchor.loc;
  op->add_result(v->type.with_dtype(to));
  return insert_before(anchor, std::move(op))->result();
}

}  // namespace

void legalize_fp8(ir::Module& m) {
  std::vector<Op*> targets;
  ir::walk(m.entry(), [&](Op& op) {
    if (!computes(op)) return;
    bool fp8 = false;
    for (const Value* v : op.operands) fp8 = fp8 || is_fp8_value(v);
    for (const auto& r : op.results) fp8 = fp8 || is_fp8_value(r.get());
    if (fp8) targets.push_back(&op);
  });
  if (targets.empty()) return;

  std::unordered_map<Value*, Value*> replaced;  // an fp8 result -> its f32 result cast back
  std::unordered_set<const Op*> back_casts;
  for (Op* op : targets) {
    const bool hex_print = op->kind == OpKind::Print && op->has_attr("hex");
    const DType wide = op->kind == OpKind::Dot ? DType::F16 : DType::F32;
    for (Value*& v : op->operands) {
      // An earlier target's result is f32 now: this op reads its fp8 value (defs precede uses in walk order).
      if (auto it = replaced.find(v); it != replaced.end()) v = it->second;
      if (!is_fp8_value(v)) continue;
      v = hex_print ? convert_before(*op, v, OpKind::Bitcast, DType::U8) : convert_before(*op, v, OpKind::Cast, wide);
    }
    if (op->kind == OpKind::Div) op->attrs["rounding"] = std::string("rn");
    for (auto& r : op->results) {
      if (!is_fp8_value(r.get())) continue;
      const DType fp8 = r->type.dtype;
      r->type.dtype = DType::F32;
      Op& next = *op->parent->ops.at(index_in_block(*op) + 1);  // an op with results is never a terminator
      Value* narrowed = convert_before(next, r.get(), OpKind::Cast, fp8);
      back_casts.insert(narrowed->def);
      replaced[r.get()] = narrowed;
    }
  }
  ir::walk(m.entry(), [&](Op& op) {
    if (back_casts.count(&op)) return;
    for (Value*& v : op.operands)
      if (auto it = replaced.find(v); it != replaced.end()) v = it->second;
  });
}

}  // namespace tessera::transforms

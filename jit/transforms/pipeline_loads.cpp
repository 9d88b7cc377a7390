#include "jit/transforms/pipeline_loads.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "jit/transforms/cse.hpp"
#include "jit/transforms/dce.hpp"

namespace tessera::transforms {
using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {

bool loop_writes_memory(ir::Block& body) {
  bool found = false;
  ir::walk(body, [&](Op& op) {
    found |= op.kind == OpKind::Store || op.kind == OpKind::AtomicRmw || op.kind == OpKind::AtomicCas;
  });
  return found;
}

bool clonable(const Op& op) {
  if (!op.regions.empty() || op.results.size() != 1) return false;
  switch (op.info().category) {
    case ir::OpCategory::Memory:
    case ir::OpCategory::Control: return false;
    default: return true;
  }
}

// Moves the ops built in `scratch` into `block` before `pos`.
void splice(ir::Block& scratch, ir::Block& block, std::vector<std::unique_ptr<Op>>::iterator pos) {
  for (auto& op : scratch.ops) op->parent = &block;
  block.ops.insert(pos, std::make_move_iterator(scratch.ops.begin()), std::make_move_iterator(scratch.ops.end()));
  scratch.ops.clear();
}

Value* map_of(const std::unordered_map<const Value*, Value*>& map, Value* v) {
  auto it = map.find(v);
  return it == map.end() ? v : it->second;
}

class LoopPipeliner {
 public:
  explicit LoopPipeliner(Op& loop) : loop_(loop), body_(*loop.regions[0]->block) {}

  void run() {
    const Value* step = loop_.operands[2];
    if (!step->def || step->def->kind != OpKind::Constant || !std::holds_alternative<std::int64_t>(step->def->attrs.at("value")) ||
        std::get<std::int64_t>(step->def->attrs.at("value")) <= 0)
      return;
    if (loop_writes_memory(body_)) return;
    std::vector<Op*> loads;
    for (auto& op : body_.ops)
      if (op->kind == OpKind::Dot)
        for (int i = 0; i < 2; ++i) {
          Value* v = op->operands[i];
          if (v->def && v->def->kind == OpKind::Load && v->def->parent == &body_ && v->type.is_tile() &&
              std::find(loads.begin(), loads.end(), v->def) == loads.end() && slice_of(*v->def))
            loads.push_back(v->def);
        }
    for (Op* load : loads) pipeline(*load);
  }

 private:
  // The ops of the body `load` depends on, in body order; false when one cannot be recomputed
  // for another iteration (it depends on a carried value, or is not a pure op).
  bool slice_of(const Op& load) {
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

  // Builds, in `scratch`, the load for induction value `iv`, additionally masked by `in_range`.
  Value* clone_load(ir::Block& scratch, const Op& load, Value* iv, Value* in_range) {
    ir::Builder b(&scratch);
    b.set_loc(load.loc);
    std::unordered_map<const Value*, Value*> map{{body_.args[0].get(), iv}};
    for (const Op* op : slices_.at(&load)) {
      b.set_loc(op->loc);
      std::vector<Value*> operands;
      for (Value* v : op->operands) operands.push_back(map_of(map, v));
      map[op->result()] = b.create1(op->kind, operands, op->result()->type, op->attrs);
    }
    b.set_loc(load.loc);
    const ir::Type& t = load.result()->type;
    Value* range = b.create1(OpKind::Splat, {in_range}, ir::Type::scalar(ir::DType::I1).with_shape(t.shape));
    Value* ptr = map_of(map, load.operands[0]);
    Value* mask = load.operands.size() > 1 ? b.create1(OpKind::And, {map_of(map, load.operands[1]), range}, range->type) : range;
    Value* other = load.operands.size() > 2 ? map_of(map, load.operands[2])
                   : ir::is_float(t.dtype) ? b.float_constant(t.dtype, 0.0, t.shape)
                                           : b.int_constant(t.dtype, 0, t.shape);
    return b.create1(OpKind::Load, {ptr, mask, other}, t, load.attrs);
  }

  void pipeline(Op& load) {
    ir::Block& outer = *loop_.parent;
    Value* lb = loop_.operands[0];
    Value* ub = loop_.operands[1];
    Value* step = loop_.operands[2];
    const ir::Type i64 = ir::Type::scalar(ir::DType::I64);

    // Prologue: iteration lb's tile, masked off when the loop runs no iteration.
    ir::Block scratch;
    {
      ir::Builder b(&scratch);
      b.set_loc(load.loc);
      Value* runs = b.create1(OpKind::CmpLt, {lb, ub}, ir::Type::scalar(ir::DType::I1));
      Value* first = clone_load(scratch, load, lb, runs);
      splice(scratch, outer, std::find_if(outer.ops.begin(), outer.ops.end(), [&](auto& o) { return o.get() == &loop_; }));
      loop_.operands.push_back(first);
    }
    Value* current = body_.add_arg(load.result()->type);
    loop_.add_result(load.result()->type);

    // In the body, where the load was: the next iteration's tile.
    {
      ir::Builder b(&scratch);
      b.set_loc(load.loc);
      Value* iv = body_.args[0].get();
      Value* next_iv = b.create1(OpKind::Add, {iv, step}, iv->type);
      Value* wide_next = b.create1(OpKind::Add, {b.create1(OpKind::Cast, {iv}, i64), b.create1(OpKind::Cast, {step}, i64)}, i64);
      Value* in_range = b.create1(OpKind::CmpLt, {wide_next, b.create1(OpKind::Cast, {ub}, i64)}, ir::Type::scalar(ir::DType::I1));
      Value* next = clone_load(scratch, load, next_iv, in_range);
      splice(scratch, body_, std::find_if(body_.ops.begin(), body_.ops.end(), [&](auto& o) { return o.get() == &load; }));
      ir::replace_all_uses(body_, load.result(), current);
      body_.terminator()->operands.push_back(next);
    }
  }

  Op& loop_;
  ir::Block& body_;
  std::unordered_map<const Op*, std::vector<const Op*>> slices_;
};

void visit(ir::Block& b) {
  std::vector<Op*> loops;
  for (auto& op : b.ops) {
    for (auto& r : op->regions) visit(*r->block);
    if (op->kind == OpKind::For) loops.push_back(op.get());
  }
  for (Op* loop : loops) LoopPipeliner(*loop).run();
}

}  // namespace

void pipeline_dot_loads(ir::Module& m) {
  if (m.num_stages < 2) return;
  visit(m.entry());
  cse(m);  // the loads' shared arithmetic, cloned once per load
  dce(m);  // the original loads and their address arithmetic
}

}  // namespace tessera::transforms

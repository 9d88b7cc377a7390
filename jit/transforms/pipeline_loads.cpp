#include "jit/transforms/pipeline_loads.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "jit/transforms/cse.hpp"
#include "jit/transforms/dce.hpp"
#include "jit/transforms/rewrite.hpp"

namespace tessera::transforms {
using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {

bool loop_writes_memory(ir::Block& body) {
  bool found = false;
  ir::walk(body, [&](Op& op) { found |= writes_or_orders_memory(op); });  // loads issued early would pass it
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

bool is_zero_constant(const Value* v) {
  if (!v->def || v->def->kind != OpKind::Constant) return false;
  const ir::Attr& a = v->def->attrs.at("value");
  if (auto* i = std::get_if<std::int64_t>(&a)) return *i == 0;
  if (auto* d = std::get_if<double>(&a)) return *d == 0.0 && !std::signbit(*d);
  return false;
}

int uses_in(ir::Block& b, const Value* v) {
  int n = 0;
  ir::walk(b, [&](Op& op) {
    for (const Value* o : op.operands) n += o == v;
  });
  return n;
}

class LoopPipeliner {
 public:
  LoopPipeliner(Op& loop, int num_stages, int& next_ring) : loop_(loop), body_(*loop.regions[0]->block), stages_(num_stages), next_ring_(next_ring) {}

  void run() {
    const Value* step = loop_.operands[2];
    if (!step->def || step->def->kind != OpKind::Constant || !std::holds_alternative<std::int64_t>(step->def->attrs.at("value")) ||
        std::get<std::int64_t>(step->def->attrs.at("value")) <= 0)
      return;
    if (loop_writes_memory(body_)) return;
    std::vector<Op*> dots;  // collected first: pipelining inserts ops into the body
    for (auto& op : body_.ops)
      if (op->kind == OpKind::Dot) dots.push_back(op.get());
    for (Op* op : dots) {
      Op* loads[2] = {nullptr, nullptr};
      for (int i = 0; i < 2; ++i) {
        Value* v = op->operands[i];
        if (v->def && v->def->kind == OpKind::Load && v->def->parent == &body_ && v->type.is_tile() && slice_of(*v->def))
          loads[i] = v->def;
      }
      // Asynchronous (cp.async into a ring of num_stages shared-memory stages that the dot reads)
      // when both operands come straight from loads used by nothing else, whose masked-off
      // elements are zero (cp.async zero-fills); else both prefetched one iteration ahead in
      // registers.
      bool async = loads[0] && loads[1] && loads[0] != loads[1];
      for (Op* l : loads)
        async = async && uses_in(body_, l->result()) == 1 && (l->operands.size() < 3 || is_zero_constant(l->operands[2]));
      if (async) {
        const int depth = stages_ - 1;
        const std::vector<int> rings{next_ring_, next_ring_ + 1};
        next_ring_ += 2;
        pipeline({loads[0], loads[1]}, depth, rings, op);
        op->attrs["async_ring_a"] = std::int64_t{rings[0]};
        op->attrs["async_ring_b"] = std::int64_t{rings[1]};
        op->attrs["async_stages"] = std::int64_t{stages_};
        op->attrs["async_depth"] = std::int64_t{depth};
        continue;
      }
      for (int i = 0; i < 2; ++i)
        if (loads[i] && (i == 0 || loads[1] != loads[0])) pipeline({loads[i]}, 1, {}, nullptr);
    }
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
  Op* clone_load(ir::Block& scratch, const Op& load, Value* iv, Value* in_range) {
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
    return b.create1(OpKind::Load, {ptr, mask, other}, t, load.attrs)->def;
  }

  // iv + j * step as the iv's type (it may wrap: only used where `in range` holds), and whether
  // it is below ub: `iv < bound` where the caller computed `bound` before the loop (see
  // narrow_bound), else in 64 bits.
  std::pair<Value*, Value*> iteration(ir::Builder& b, Value* iv, int j, Value* bound = nullptr) {
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
  Value* narrow_bound(ir::Builder& b, int j) {
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

  // Loads `depth` iterations ahead: a prologue loads iterations 0 .. depth-1, the loop carries
  // them (the oldest first), the body loads iteration i + depth. With rings (async), each load is
  // marked with its ring and stage, and the loads of one iteration are issued together (the
  // prologue iteration by iteration, A then B), so that the copies complete in the order the
  // dot's waits count them; the body's go after the dot (their stage is the one the dot of the
  // previous iteration read, free once every thread passed this iteration's barrier).
  void pipeline(const std::vector<Op*>& loads, int depth, const std::vector<int>& rings, Op* dot) {
    ir::Block& outer = *loop_.parent;
    Value* lb = loop_.operands[0];
    ir::Block scratch;
    Value* body_bound = nullptr;
    auto mark = [&](Op* l, std::size_t which, int slot) {
      if (rings.empty()) return;
      l->attrs["async_ring"] = std::int64_t{rings[which]};
      l->attrs["async_slot"] = std::int64_t{slot};
    };
    {
      ir::Builder b(&scratch);
      b.set_loc(loads[0]->loc);
      body_bound = narrow_bound(b, depth);
      for (int j = 0; j < depth; ++j) {
        auto [at, in_range] = iteration(b, lb, j);
        for (std::size_t l = 0; l < loads.size(); ++l) {
          Op* first = clone_load(scratch, *loads[l], at, in_range);
          mark(first, l, j);
          loop_.operands.push_back(first->result());
        }
      }
      splice(scratch, outer, std::find_if(outer.ops.begin(), outer.ops.end(), [&](auto& o) { return o.get() == &loop_; }));
    }
    // carried[l][j]: load l's tile of iteration i + j, in the argument order of the operands above.
    std::vector<std::vector<Value*>> carried(loads.size());
    for (int j = 0; j < depth; ++j)
      for (std::size_t l = 0; l < loads.size(); ++l) {
        carried[l].push_back(body_.add_arg(loads[l]->result()->type));
        loop_.add_result(loads[l]->result()->type);
      }
    std::vector<Value*> next(loads.size());
    for (std::size_t l = 0; l < loads.size(); ++l) {
      ir::Builder b(&scratch);
      b.set_loc(loads[l]->loc);
      auto [at, in_range] = iteration(b, body_.args[0].get(), depth, body_bound);
      Op* n = clone_load(scratch, *loads[l], at, in_range);
      mark(n, l, -1);
      next[l] = n->result();
      const Op* anchor = dot ? body_.terminator() : loads[l];
      splice(scratch, body_, std::find_if(body_.ops.begin(), body_.ops.end(), [&](auto& o) { return o.get() == anchor; }));
    }
    for (std::size_t l = 0; l < loads.size(); ++l) ir::replace_all_uses(body_, loads[l]->result(), carried[l][0]);
    Op* yield = body_.terminator();
    for (int j = 0; j < depth; ++j)
      for (std::size_t l = 0; l < loads.size(); ++l)
        yield->operands.push_back(j + 1 < depth ? carried[l][static_cast<std::size_t>(j + 1)] : next[l]);
  }

  Op& loop_;
  ir::Block& body_;
  int stages_;
  int& next_ring_;
  std::unordered_map<const Op*, std::vector<const Op*>> slices_;
};

void visit(ir::Block& b, int num_stages, int& next_ring) {
  std::vector<Op*> loops;
  for (auto& op : b.ops) {
    for (auto& r : op->regions) visit(*r->block, num_stages, next_ring);
    if (op->kind == OpKind::For) loops.push_back(op.get());
  }
  for (Op* loop : loops) LoopPipeliner(*loop, num_stages, next_ring).run();
}

}  // namespace

void pipeline_dot_loads(ir::Module& m, int num_stages) {
  if (num_stages < 2) return;
  int next_ring = 0;
  visit(m.entry(), num_stages, next_ring);
  cse(m);  // the loads' shared arithmetic, cloned once per load
  dce(m);  // the original loads and their address arithmetic
}

}  // namespace tessera::transforms

// for_range, while_ and if_: open a region, run the body callback in it, and close it by turning the outer
// variables the body assigned into loop-carried values or if results (variables.cpp explains the
// SSA construction).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <variant>

#include "dsl/src/trace_state.hpp"
#include "jit/ir/print_format.hpp"
#include "tessera/control.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {
namespace {

// LoopOptions::num_stages's range, as LaunchOptions::num_stages's (launch.cpp).
constexpr int kMaxLoopStages = 8;

// Undoes a half-traced control op if its body throws: the region is popped, the op removed and
// the builder put back, so that a caller who catches the error sees a consistent trace.
class RegionGuard {
 public:
  RegionGuard(TraceState& st, ir::Op* op) : st_(st), op_(op), depth_(st.depth()) {}
  ~RegionGuard() {
    if (op_ == nullptr) return;
    while (st_.depth() > depth_) close_scope(st_);
    ir::Block* parent = op_->parent;
    std::erase_if(parent->ops, [&](const std::unique_ptr<ir::Op>& o) { return o.get() == op_; });
    st_.builder.set_block(parent);
  }
  void done() { op_ = nullptr; }
  RegionGuard(const RegionGuard&) = delete;
  RegionGuard& operator=(const RegionGuard&) = delete;

 private:
  TraceState& st_;
  ir::Op* op_;
  int depth_;
};

// Keeps `first` (a for's induction variable; null for a do_while), then `carried` in order; drops
// every other block argument.
void rebuild_loop_args(ir::Block& body, ir::Value* first, const std::vector<ir::Value*>& carried) {
  std::vector<std::unique_ptr<ir::Value>> old = std::move(body.args);
  body.args.clear();
  auto take = [&](ir::Value* v) {
    auto it = std::find_if(old.begin(), old.end(), [&](const auto& p) { return p.get() == v; });
    body.args.push_back(std::move(*it));
    body.args.back()->index = static_cast<int>(body.args.size()) - 1;
  };
  if (first) take(first);
  for (ir::Value* v : carried) take(v);
}

// A loop body once traced: the outer variables it assigned, carried around the loop, and their
// values before it.
struct SealedLoop {
  std::vector<SlotPtr> carried;
  std::vector<ir::Value*> inits;
};

// Seals the innermost (loop) scope, whose region is `block`: each assigned variable becomes a
// block argument (after `first`) and a yielded value (after `yield_prefix`), every other
// placeholder folds to its outer value, and the scope closes.
SealedLoop seal_loop_body(TraceState& st, ir::Block* block, ir::Value* first, std::vector<ir::Value*> yield_prefix,
                          const ir::SourceLoc& where) {
  const int d = st.depth();
  Scope& sc = st.scopes.back();
  SealedLoop out;
  std::vector<ir::Value*> finals = std::move(yield_prefix), args;
  for (auto& s : sc.assigned) {
    auto in = std::find_if(sc.incoming.begin(), sc.incoming.end(), [&](const auto& i) { return i.slot == s; });
    ir::Value* outer = value_at(st, s, d - 1);
    out.inits.push_back(outer);
    finals.push_back(innermost_value(st, *s));
    args.push_back(in != sc.incoming.end() ? in->placeholder : block->add_arg(outer->type));
  }
  for (auto& in : sc.incoming)
    if (std::find(sc.assigned.begin(), sc.assigned.end(), in.slot) == sc.assigned.end())
      ir::replace_all_uses(*block, in.placeholder, in.outer);
  rebuild_loop_args(*block, first, args);
  st.builder.set_loc(where);
  st.builder.create(ir::OpKind::Yield, finals, {});
  out.carried = sc.assigned;
  close_scope(st);
  return out;
}

struct Assigned {
  SlotPtr slot;
  ir::Value* value;
};

// Runs one branch body in `block` and returns the outer variables it assigned, with their values.
std::vector<Assigned> trace_branch(TraceState& st, ir::Block* block, const std::function<void()>& body,
                                   const ir::SourceLoc& loc) {
  open_scope(st, Scope::Kind::Branch, block, loc);
  ir::Block* parent = st.builder.block();
  st.builder.set_block(block);
  body();
  std::vector<Assigned> out;
  for (auto& s : st.scopes.back().assigned) out.push_back({s, innermost_value(st, *s)});
  close_scope(st);
  st.builder.set_block(parent);
  return out;
}

// The value of a scalar integer constant, if `v` is one (a C++ bound, or a tile made by ts::full).
std::optional<std::int64_t> constant_int(const ir::Value* v) {
  if (v->def == nullptr || v->def->kind != ir::OpKind::Constant || v->type.is_tile() || !ir::is_int(v->type.dtype))
    return std::nullopt;
  const auto it = v->def->attrs.find("value");
  if (it == v->def->attrs.end()) return std::nullopt;
  if (const auto* i = std::get_if<std::int64_t>(&it->second)) return *i;
  return std::nullopt;
}

// A bound as written in an error: its value when it is a constant, else its name.
std::string bound_str(const std::optional<std::int64_t>& v, const char* name) { return v ? std::to_string(*v) : name; }

// Refuses the loops that trace-time constants show to be mistakes. A step of 0 never moves the
// counter. And the counter is an i32 that takes lb, lb + step, ... while it is below ub (above,
// for a negative step): when lb, ub and step are all constants and the step after the last
// iteration would pass INT32_MAX (INT32_MIN), the bounds were written against the end of i32,
// which is refused at the user's line. With a bound known only at run time the loop is left to
// the lowering and the interpreter, which end it where the counter would wrap (README, "Errors
// and limits"), and report a step of 0.
void check_loop_bounds(const ir::Value* lb, const ir::Value* ub, const ir::Value* step, const Loc& loc) {
  const auto l = constant_int(lb), u = constant_int(ub), s = constant_int(step);
  const std::string loop =
      fmt::format("for_range({}, {}, {})", bound_str(l, "lb"), bound_str(u, "ub"), bound_str(s, "step"));
  if (s && *s == 0)
    program_error(loc, fmt::format("{}: the step is 0, so the loop would never end; give a positive or negative step",
                                   loop));
  if (!l || !u || !s || lb->type.dtype != DType::I32) return;
  constexpr std::int64_t lo = std::numeric_limits<std::int32_t>::min(), hi = std::numeric_limits<std::int32_t>::max();
  // The last value the counter takes (bounds fit in i32, so none of this overflows int64).
  std::int64_t last;
  if (*s > 0 && *l < *u) last = *l + (*u - 1 - *l) / *s * *s;
  else if (*s < 0 && *l > *u) last = *l - (*l - 1 - *u) / -*s * -*s;
  else return;  // no iteration at all
  const std::int64_t next = last + *s;
  if (next > hi || next < lo)
    program_error(loc, fmt::format("{}: after its last iteration (i = {}) the i32 loop counter would step to {}, past "
                                   "{}; keep ub + step within i32", loop, last, next, next > hi ? hi : lo));
}

}  // namespace

void trace_for(ir::Value* lb, ir::Value* ub, ir::Value* step, const std::function<void(ir::Value* iv)>& body,
               int num_stages, const Loc& loc) {
  TraceState& st = current_state(loc);
  check_region_depth(st, "for_range", loc);
  check_loop_bounds(lb, ub, step, loc);
  if (num_stages < 0 || num_stages > kMaxLoopStages)
    program_error(loc, fmt::format("for_range: LoopOptions::num_stages is {}; give 1 to {} (0: the launch's num_stages "
                                   "for loops that feed a dot)",
                                   num_stages, kMaxLoopStages));
  ir::Builder& b = builder_at(loc);
  const ir::SourceLoc where = b.loc();
  ir::Block* outer_block = b.block();
  std::map<std::string, ir::Attr> attrs;
  if (num_stages > 0) attrs["num_stages"] = std::int64_t{num_stages};
  ir::Op* op = b.create(ir::OpKind::For, {lb, ub, step}, {}, std::move(attrs), 1);
  RegionGuard guard(st, op);
  ir::Block* block = op->regions[0]->block.get();
  ir::Value* iv = block->add_arg(lb->type);
  open_scope(st, Scope::Kind::Loop, block, where);
  b.set_block(block);
  body(iv);
  const SealedLoop sealed = seal_loop_body(st, block, iv, {}, where);
  b.set_block(outer_block);
  guard.done();

  op->operands.insert(op->operands.end(), sealed.inits.begin(), sealed.inits.end());
  for (std::size_t i = 0; i < sealed.carried.size(); ++i)
    assign(st, sealed.carried[i], op->add_result(sealed.inits[i]->type), loc);
}

void trace_while(const std::function<ir::Value*()>& cond, const std::function<void()>& body, const Loc& loc) {
  TraceState& st = current_state(loc);
  check_region_depth(st, "while_", loc);
  ir::Builder& b = builder_at(loc);
  const ir::SourceLoc where = b.loc();
  ir::Block* outer_block = b.block();
  ir::Op* op = b.create(ir::OpKind::DoWhile, {}, {}, {}, 1);
  RegionGuard guard(st, op);
  ir::Block* block = op->regions[0]->block.get();
  open_scope(st, Scope::Kind::Loop, block, where);
  b.set_block(block);
  // do { c = cond(); if (c) body(); } while (c): the body never runs once cond is false.
  ir::Value* c = cond();
  if (c->type.is_tile() || c->type.dtype != DType::I1)
    program_error(loc, fmt::format("while_ needs a scalar condition (i1), got {}; reduce a mask with ts::max or "
                                   "compare a scalar", ir::to_string(c->type)));
  trace_if(c, body, nullptr, loc);
  const SealedLoop sealed = seal_loop_body(st, block, nullptr, {c}, where);
  b.set_block(outer_block);
  guard.done();

  op->operands = sealed.inits;
  for (std::size_t i = 0; i < sealed.carried.size(); ++i)
    assign(st, sealed.carried[i], op->add_result(sealed.inits[i]->type), loc);
}

void trace_if(ir::Value* cond, const std::function<void()>& then_body, const std::function<void()>* else_body,
              const Loc& loc) {
  TraceState& st = current_state(loc);
  check_region_depth(st, "if_", loc);
  if (cond->type.is_tile() || cond->type.dtype != DType::I1)
    program_error(loc, fmt::format("if_ needs a scalar condition (i1), got {}; reduce the mask or use where()",
                                   ir::to_string(cond->type)));
  ir::Builder& b = builder_at(loc);
  const ir::SourceLoc where = b.loc();
  ir::Block* outer_block = b.block();
  ir::Op* op = b.create(ir::OpKind::If, {cond}, {}, {}, 2);
  RegionGuard guard(st, op);
  ir::Block* then_block = op->regions[0]->block.get();
  ir::Block* else_block = op->regions[1]->block.get();
  std::vector<Assigned> then_vals = trace_branch(st, then_block, then_body, where);
  std::vector<Assigned> else_vals = else_body ? trace_branch(st, else_block, *else_body, where) : std::vector<Assigned>{};
  guard.done();

  // Each variable assigned in either branch is yielded by both; a branch that did not assign it
  // yields the value it had before the if_.
  std::vector<SlotPtr> slots;
  for (const auto* list : {&then_vals, &else_vals})
    for (const auto& a : *list)
      if (std::find(slots.begin(), slots.end(), a.slot) == slots.end()) slots.push_back(a.slot);
  auto value_in = [&](const std::vector<Assigned>& list, const SlotPtr& s, ir::Value* outer) {
    auto it = std::find_if(list.begin(), list.end(), [&](const Assigned& a) { return a.slot == s; });
    return it != list.end() ? it->value : outer;
  };
  std::vector<ir::Value*> then_yield, else_yield;
  for (const auto& s : slots) {
    ir::Value* outer = value_at(st, s, st.depth());
    then_yield.push_back(value_in(then_vals, s, outer));
    else_yield.push_back(value_in(else_vals, s, outer));
  }
  b.set_loc(where);
  b.set_block(then_block);
  b.create(ir::OpKind::Yield, then_yield, {});
  b.set_block(else_block);
  b.create(ir::OpKind::Yield, else_yield, {});
  b.set_block(outer_block);
  for (std::size_t i = 0; i < slots.size(); ++i) assign(st, slots[i], op->add_result(then_yield[i]->type), loc);
}

void emit_debug_barrier(const Loc& loc) { builder_at(loc).create(ir::OpKind::DebugBarrier, {}, {}); }

void emit_print(std::string_view prefix, const std::vector<ir::Value*>& values, bool hex, const Loc& loc) {
  if (const std::string p = ir::print_prefix_problem(prefix); !p.empty()) program_error(loc, p);
  for (const ir::Value* v : values)
    if (const std::string p = ir::print_operand_problem(v->type); !p.empty()) program_error(loc, p);
  std::map<std::string, ir::Attr> attrs{{"prefix", ir::normalized_print_prefix(prefix, !values.empty())}};
  if (hex) attrs["hex"] = std::int64_t{1};
  builder_at(loc).create(ir::OpKind::Print, values, {}, attrs);
}

void emit_assert(ir::Value* cond, std::string_view message, const Loc& loc) {
  if (const std::string p = ir::assert_message_problem(message); !p.empty()) program_error(loc, p);
  if (const std::string p = ir::assert_condition_problem(cond->type); !p.empty()) program_error(loc, p);
  builder_at(loc).create(ir::OpKind::Assert, {cond}, {}, {{"message", std::string(message)}});
}

ir::Value* LoopBound::materialize(const Loc& loc) const {
  if (tile_ != nullptr) {
    ir::Value* v = tile_->ir_value(loc);
    if (v->type.is_tile())
      program_error(loc, fmt::format("a for_range bound must be a scalar, got {}", ir::to_string(v->type)));
    return v;
  }
  if (value_ < std::numeric_limits<std::int32_t>::min() || value_ > std::numeric_limits<std::int32_t>::max())
    program_error(loc, fmt::format("the for_range bound {} does not fit in i32", value_));
  return builder_at(loc).int_constant(DType::I32, value_);
}

}  // namespace tessera::detail

#include "jit/analysis/wgmma_in_flight.hpp"

#include <unordered_set>

#include "jit/analysis/layouts.hpp"
#include "jit/analysis/shared_memory.hpp"

namespace tessera::analysis {
using ir::Op;
using ir::OpKind;
using I = std::int64_t;

namespace {
// Programs of `bytes` of shared memory that fit one SM (Hopper: 228 KB an SM, 1 KB of it
// reserved a program).
I programs_per_sm(I bytes) {
  constexpr I kSharedPerSm = 228 * 1024, kReservedPerProgram = 1024;
  return kSharedPerSm / (bytes + kReservedPerProgram);
}

// The loop whose iterations a pipelined dot's ring serves: the for whose body holds the dot.
const Op* ring_loop(const Op& dot) {
  const Op* loop = ir::parent_op(dot);
  return loop && loop->kind == OpKind::For ? loop : nullptr;
}

const Op* def_of(const ir::Value* v, OpKind k) { return v->def && v->def->kind == k ? v->def : nullptr; }

// Whether `slot` is the iteration count of `loop` as the pipeline pass computes it:
// cast(div(cast(sub(iv, lb)), cast(step))).
bool is_iteration_count(const ir::Value* slot, const Op& loop) {
  const Op* narrow = def_of(slot, OpKind::Cast);
  const Op* div = narrow ? def_of(narrow->operands[0], OpKind::Div) : nullptr;
  const Op* from = div ? def_of(div->operands[0], OpKind::Cast) : nullptr;
  const Op* step = div ? def_of(div->operands[1], OpKind::Cast) : nullptr;
  const Op* sub = from ? def_of(from->operands[0], OpKind::Sub) : nullptr;
  return step && sub && step->operands[0] == loop.operands[2] && sub->operands[0] == loop.regions[0]->block->args[0].get() &&
         sub->operands[1] == loop.operands[0];
}

// Whether `s` is slot + ahead, as `add slot, constant` (the pipeline pass's copy stage).
bool is_slot_ahead(const ir::Value* s, const ir::Value* slot, I ahead) {
  const Op* add = s->def;
  if (!add || add->kind != OpKind::Add) return false;
  for (int i = 0; i < 2; ++i) {
    const ir::Value* c = add->operands[static_cast<std::size_t>(1 - i)];
    if (add->operands[static_cast<std::size_t>(i)] == slot && c->def && c->def->kind == OpKind::Constant &&
        std::holds_alternative<I>(c->def->attrs.at("value")) && std::get<I>(c->def->attrs.at("value")) == ahead)
      return true;
  }
  return false;
}

// Whether the rings `dot` reads follow the pipeline pass's schedule (wgmma_may_stay_in_flight):
// both views index stage i (the iteration count) of two rings of one length S >= 2, and the only
// writes to them in the loop are copies after the dot into stage i + S - 1.
bool follows_ring_schedule(const Op& dot) {
  const Op* views[2] = {dot.operands[0]->def, dot.operands[1]->def};
  for (const Op* v : views)
    if (!v || v->kind != OpKind::SmemIndex) return false;
  const ir::Value* slot = views[0]->operands[1];
  const Op* rings[2] = {shared_buffer_of(dot.operands[0]), shared_buffer_of(dot.operands[1])};
  if (views[1]->operands[1] != slot || !rings[0] || !rings[1] || rings[0] == rings[1] ||
      rings[0]->result()->type.shape[0] != rings[1]->result()->type.shape[0] || !is_iteration_count(slot, *ir::parent_op(dot)))
    return false;
  const I stages = rings[0]->result()->type.shape[0];
  if (stages < 2) return false;
  bool ok = true, after_dot = false;
  for (const auto& op : dot.parent->ops) {
    after_dot = after_dot || op.get() == &dot;
    auto check = [&](const Op& o) {
      if (o.kind != OpKind::AsyncCopy && o.kind != OpKind::LocalStore) return;
      const Op* target = shared_buffer_of(o.operands[0]);
      if (target != rings[0] && target != rings[1]) return;
      const Op* index = o.operands[0]->def;
      ok = ok && after_dot && &o == op.get() && index && index->kind == OpKind::SmemIndex && is_slot_ahead(index->operands[1], slot, stages - 1);
    };
    check(*op);
    for (const auto& r : op->regions) ir::walk(*r->block, check);
  }
  return ok;
}

// The yield slot a dot's result goes to, where that is its only use; -1 otherwise.
int only_yielded_slot(const Op& dot) {
  const ir::Block& body = *dot.parent;
  const Op* yield = body.terminator();
  if (!yield) return -1;
  int slot = -1, uses = 0;
  ir::walk(const_cast<ir::Block&>(body), [&](const Op& o) {
    for (const ir::Value* v : o.operands) uses += v == dot.result();
  });
  for (std::size_t c = 0; c < yield->operands.size(); ++c)
    if (yield->operands[c] == dot.result()) slot = static_cast<int>(c);
  return uses == 1 ? slot : -1;
}

// The block argument that carries a form-2 dot's result into the next iteration.
const ir::Value* carried_accumulator(const Op& dot) {
  const int slot = only_yielded_slot(dot);
  const auto& args = dot.parent->args;
  return slot >= 0 && static_cast<std::size_t>(slot) + 1 < args.size() ? args[static_cast<std::size_t>(slot) + 1].get() : nullptr;
}

// An asynchronous wgmma dot in a for whose accumulator is only carried around it (the block
// argument feeds nothing but the dot, the result nothing but the yield).
bool only_carries_its_accumulator(const Op& dot) {
  if (!dot_uses_wgmma(dot) || !is_async_dot(dot) || !ring_loop(dot)) return false;
  const ir::Value* acc = dot.operands.at(2);
  if (acc != carried_accumulator(dot)) return false;
  int acc_uses = 0;
  ir::walk(*dot.parent, [&](const Op& o) {
    for (const ir::Value* v : o.operands) acc_uses += v == acc;
  });
  return acc_uses == 1;
}
}  // namespace

bool wgmma_may_stay_in_flight(const Op& dot) { return only_carries_its_accumulator(dot) && follows_ring_schedule(dot); }

bool wgmma_spare_stage(const Op& dot) {
  if (!wgmma_may_stay_in_flight(dot)) return false;
  // The extra stage must not cost a resident program per SM (Hopper: 228 KB of shared memory per
  // SM, 1 KB of it reserved per program): two 96 KB rings fit, two 128 KB ones do not.
  const I stages = shared_buffer_of(dot.operands[0])->result()->type.shape[0];
  const I stage = shared_stage_bytes(dot.operands[0]->type) + shared_stage_bytes(dot.operands[1]->type);
  return programs_per_sm((stages + 1) * stage) == programs_per_sm(stages * stage);
}

namespace {
// The top-level op of `body` that holds `op` (itself, or an op whose region holds it).
const Op* top_level_holder(const Op& op, const ir::Block& body) {
  const Op* o = &op;
  while (o && o->parent != &body) o = ir::parent_op(*o);
  return o;
}

// The smem_index op of a dot's view (through an smem_trans).
const Op* stage_index_of(const ir::Value* view) {
  const Op* def = view->def;
  if (def && def->kind == OpKind::SmemTrans) def = def->operands[0]->def;
  return def && def->kind == OpKind::SmemIndex ? def : nullptr;
}

// Whether `v` is computed (within `body`) from `from`.
bool computed_from(const ir::Value* v, const ir::Value* from, const ir::Block& body) {
  std::vector<const ir::Value*> work{v};
  std::unordered_set<const ir::Value*> seen;
  while (!work.empty()) {
    const ir::Value* x = work.back();
    work.pop_back();
    if (x == from) return true;
    if (!seen.insert(x).second || !x->def || !top_level_holder(*x->def, body)) continue;
    for (const ir::Value* o : x->def->operands) work.push_back(o);
  }
  return false;
}

// Form 2's rings (the decision): each view D reads indexes the iteration count of a ring of S >= 2
// stages that the loop writes only by top-level copies after W into stage i + S - 1.
bool follows_deferred_ring_schedule(const Op& dot, const Op& w) {
  const Op& loop = *ir::parent_op(dot);
  const ir::Block& body = *dot.parent;
  const std::size_t wi = ir::index_in_block(w);
  for (int l = 0; l < 2; ++l) {
    if (!dot_reads_view(dot, l)) continue;
    const Op* index = stage_index_of(dot.operands[static_cast<std::size_t>(l)]);
    const Op* ring = shared_buffer_of(dot.operands[static_cast<std::size_t>(l)]);
    if (!index || !ring || !is_iteration_count(index->operands[1], loop)) return false;
    const I stages = ring->result()->type.shape[0];
    if (stages < 2) return false;
    bool ok = true;
    ir::walk(const_cast<ir::Block&>(body), [&](const Op& o) {
      if ((o.kind != OpKind::AsyncCopy && o.kind != OpKind::LocalStore) || shared_buffer_of(o.operands[0]) != ring) return;
      const Op* target = o.operands[0]->def;
      ok = ok && o.kind == OpKind::AsyncCopy && o.parent == &body && ir::index_in_block(o) > wi && target &&
           target->kind == OpKind::SmemIndex && is_slot_ahead(target->operands[1], index->operands[1], stages - 1);
    });
    if (!ok) return false;
  }
  return true;
}
}  // namespace

const Op* wgmma_retiring_dot(const Op& dot) {
  if (!dot_uses_wgmma(dot) || !ring_loop(dot) || !dot_reads_view(dot, 1) || (!dot_reads_view(dot, 0) && !wgmma_a_in_registers(dot)))
    return nullptr;
  const ir::Block& body = *dot.parent;
  const Op* w = nullptr;
  bool barrier_before_w = false;
  for (const auto& op : body.ops) {
    if (op->kind == OpKind::Dot && dot_uses_wgmma(*op)) {
      w = op.get();
      break;
    }
    barrier_before_w = barrier_before_w || op->kind == OpKind::DebugBarrier;
  }
  // W waits for all (not in flight itself: as the body's first wgmma dot it can only be form 1).
  if (!w || w == &dot || !barrier_before_w || (w->has_attr("wgmma_in_flight") && wgmma_in_flight(*w))) return nullptr;
  const std::size_t wi = ir::index_in_block(*w);
  if (ir::index_in_block(dot) < wi) return nullptr;
  const ir::Value* acc = carried_accumulator(dot);
  if (!acc) return nullptr;
  bool after_w = true;
  ir::walk(const_cast<ir::Block&>(body), [&](const Op& o) {
    for (const ir::Value* v : o.operands)
      if (v == acc) after_w = after_w && ir::index_in_block(*top_level_holder(o, body)) > wi;
  });
  if (!after_w) return nullptr;
  if (!dot_reads_view(dot, 0) && !computed_from(dot.operands[0], w->result(), body)) return nullptr;
  return w;
}

bool wgmma_may_defer(const Op& dot) {
  const Op* w = wgmma_retiring_dot(dot);
  return w && follows_deferred_ring_schedule(dot, *w);
}

bool wgmma_retired_in_iteration(const Op& dot) {
  const auto& ops = dot.parent->ops;
  for (std::size_t i = ir::index_in_block(dot) + 1; i < ops.size(); ++i)
    if (ops[i]->kind == OpKind::Dot && dot_uses_wgmma(*ops[i]) && !only_carries_its_accumulator(*ops[i]) &&
        !wgmma_retiring_dot(*ops[i]))  // synchronous whatever the layout pass decides for it
      return true;
  return false;
}

namespace {
// The form the layout pass recorded ({wgmma_in_flight = 1 | 2}); 0 where none.
I recorded_form(const Op& dot) {
  const auto it = dot.attrs.find("wgmma_in_flight");
  return it != dot.attrs.end() && std::holds_alternative<I>(it->second) ? std::get<I>(it->second) : 0;
}
}  // namespace

bool wgmma_deferred(const Op& dot) { return recorded_form(dot) == 2 && wgmma_retiring_dot(dot); }

bool wgmma_in_flight(const Op& dot) {
  const I form = recorded_form(dot);
  return form == 2 ? wgmma_retiring_dot(dot) != nullptr : form != 0 && only_carries_its_accumulator(dot);
}

bool spare_stages_keep_programs(const ir::Module& m, const std::vector<const Op*>& rings) {
  I total = 0, extra = 0;
  ir::walk(const_cast<ir::Block&>(m.entry()), [&](const Op& o) {
    if (o.kind == OpKind::LocalAlloc) total += shared_bytes(o);
  });
  for (const Op* r : rings) extra += shared_bytes(*r) / r->result()->type.shape[0];
  return programs_per_sm(total + extra) == programs_per_sm(total);
}

std::vector<const ir::Value*> wgmma_accumulators_retired_by(const Op& w) {
  std::vector<const ir::Value*> accs;
  if (!w.parent) return accs;
  for (const auto& op : w.parent->ops)
    if (op->kind == OpKind::Dot && recorded_form(*op) == 2 && wgmma_retiring_dot(*op) == &w) accs.push_back(carried_accumulator(*op));
  return accs;
}

}  // namespace tessera::analysis

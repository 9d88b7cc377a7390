#include "jit/transforms/pipeline_loads.hpp"

#include <algorithm>
#include <cstdint>
#include <cmath>

#include "jit/transforms/cse.hpp"
#include "jit/transforms/dce.hpp"
#include "jit/transforms/loop_iterations.hpp"
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

bool is_zero_constant(const Value* v) {
  if (!v->def || v->def->kind != OpKind::Constant) return false;
  const ir::Attr& a = v->def->attrs.at("value");
  if (auto* i = std::get_if<std::int64_t>(&a)) return *i == 0;
  if (auto* d = std::get_if<double>(&a)) return *d == 0.0 && !std::signbit(*d);
  return false;
}

// The kernel argument a pointer (tile) is computed from through addptr and the shape ops, or null
// where it is loaded, selected or otherwise not traced to one.
const Value* pointer_root(const Value* v) {
  while (v->def) {
    switch (v->def->kind) {
      case OpKind::AddPtr:
      case OpKind::Splat:
      case OpKind::Broadcast:
      case OpKind::ExpandDims:
      case OpKind::Reshape: v = v->def->operands[0]; break;
      default: return nullptr;
    }
  }
  // A block argument of the entry block (the module's region, which no op holds).
  const bool kernel_argument = v->owner && v->owner->parent && !v->owner->parent->parent;
  return kernel_argument && v->type.is_ptr() ? v : nullptr;
}

// Whether the loop's step is known to be positive: a positive constant, or num_programs.
bool positive_step(const Op& loop) {
  const Value* step = loop.operands[2];
  if (!step->def) return false;
  if (step->def->kind == OpKind::NumPrograms) return true;
  return step->def->kind == OpKind::Constant && std::holds_alternative<std::int64_t>(step->def->attrs.at("value")) &&
         std::get<std::int64_t>(step->def->attrs.at("value")) > 0;
}

class LoopPipeliner {
 public:
  LoopPipeliner(Op& loop, int num_stages)
      : loop_(loop), body_(*loop.regions[0]->block), stages_(num_stages), iters_(loop) {}

  // `marked`: the loop asked for pipelining itself (LoopOptions), which pipelines it without a dot.
  void run(bool marked) {
    if (!positive_step(loop_)) return;
    std::vector<Op*> dots;  // collected first: pipelining inserts ops into the body
    for (auto& op : body_.ops)
      if (op->kind == OpKind::Dot) dots.push_back(op.get());
    if (dots.empty()) {
      if (marked) pipeline_loop_loads();
      return;
    }
    if (loop_writes_memory(body_)) return;
    // Per operand: loop-invariant tiles are stored into shared memory once, before the loop;
    // loads used by nothing but the dot, whose masked-off elements are zero (cp.async zero-fills),
    // are copied into rings; other loads are prefetched one iteration ahead in registers.
    // A load that dots read directly and through trans (attention backward's Q and dO) is one
    // ring, read through a transposed view (smem_trans) where the dot takes its transpose.
    std::vector<Ring> rings;
    std::vector<Op*> in_registers;
    for (Op* dot : dots)
      for (int i = 0; i < 2; ++i) {
        Value* v = dot->operands[static_cast<std::size_t>(i)];
        if (v->type.shared) continue;
        if (!defined_in_loop(v)) {
          stage_invariant_operand(*dot, i);
          continue;
        }
        const bool transposed = is_transpose(v->def);
        if (transposed) v = v->def->operands[0];
        Op* load = v->def && v->def->kind == OpKind::Load && v->def->parent == &body_ && v->type.is_tile() ? v->def : nullptr;
        if (!load || !iters_.slice_of(*load)) continue;
        auto known = std::find_if(rings.begin(), rings.end(), [&](const Ring& r) { return r.load == load; });
        if (known != rings.end()) {
          known->readers.push_back({dot, i, transposed});
          continue;
        }
        const bool ring = only_read_by_dots(v) && (load->operands.size() < 3 || is_zero_constant(load->operands[2]));
        if (ring) rings.push_back({load, {{dot, i, transposed}}});
        else if (!transposed && std::find(in_registers.begin(), in_registers.end(), load) == in_registers.end())
          in_registers.push_back(load);
      }
    if (!rings.empty()) pipeline_async(rings);
    for (Op* load : in_registers) pipeline_in_registers(*load);
  }

  // A loop without a dot that asked for pipelining (a persistent row loop): each tile load of the
  // body whose masked-off elements are 0 goes into a ring and is read back with local_load where
  // it was (pipeline_into_registers); each scalar load is loaded one iteration ahead in registers.
  // Loads issued early pass the stores of the iterations between: as Triton's pipeliner does, the
  // pass assumes that a store through one kernel argument does not write what a load through
  // another reads, and leaves alone a load whose argument the loop stores through. A loop with any
  // other write or ordering (atomics, barriers, prints, asserts) is left as written.
  void pipeline_loop_loads() {
    std::vector<const Value*> stored;
    bool only_stores = true;
    ir::walk(body_, [&](Op& op) {
      if (!writes_or_orders_memory(op)) return;
      const Value* root = op.kind == OpKind::Store ? pointer_root(op.operands[0]) : nullptr;
      if (root) stored.push_back(root);
      else only_stores = false;
    });
    if (!only_stores) return;
    std::vector<Ring> rings;
    std::vector<Op*> in_registers;
    for (auto& op : body_.ops) {
      if (op->kind != OpKind::Load) continue;
      const Value* root = pointer_root(op->operands[0]);
      if (!root || std::find(stored.begin(), stored.end(), root) != stored.end() || !iters_.slice_of(*op)) continue;
      if (!op->result()->type.is_tile()) in_registers.push_back(op.get());
      else if (op->operands.size() < 3 || is_zero_constant(op->operands[2])) rings.push_back({op.get(), {}});
    }
    if (!rings.empty()) pipeline_into_registers(rings);
    for (Op* load : in_registers) pipeline_in_registers(*load);
  }

 private:
  // A load copied into a ring, and the dot operands it feeds (in body order; `transposed`: the
  // dot reads the load's transpose).
  struct Reader {
    Op* dot;
    int operand;
    bool transposed;
  };
  struct Ring {
    Op* load;
    std::vector<Reader> readers;
    Value* buffer = nullptr;
  };

  static bool is_transpose(const Op* op) {
    if (!op || op->kind != OpKind::Trans) return false;
    const auto& order = std::get<std::vector<std::int64_t>>(op->attrs.at("order"));
    return order == std::vector<std::int64_t>{1, 0};
  }

  // Whether every use of `v` in the body is a dot's a or b, directly or through a trans whose
  // every use is: the ring then replaces the load everywhere.
  bool only_read_by_dots(const Value* v) {
    bool ok = true;
    int uses = 0;
    ir::walk(body_, [&](Op& op) {
      for (std::size_t i = 0; i < op.operands.size(); ++i) {
        if (op.operands[i] != v) continue;
        ++uses;
        const bool dot_operand = op.kind == OpKind::Dot && i < 2;
        ok = ok && (dot_operand || (is_transpose(&op) && op.parent == &body_ && only_read_by_dots(op.result())));
      }
    });
    return ok && uses > 0;
  }

  // Whether `v` is made inside the loop (by an op of its body or nested deeper, or as a block
  // argument of the body): else it holds one value for every iteration.
  bool defined_in_loop(const Value* v) const {
    for (const ir::Block* b = v->def ? v->def->parent : v->owner; b && b->parent && b->parent->parent; b = b->parent->parent->parent)
      if (b->parent->parent == &loop_) return true;
    return false;
  }

  // The dot's `operand`, a tile defined outside the loop, stored once into a buffer of its own
  // before the loop (a debug_barrier after: every thread's part written before any dot reads it);
  // the dot reads the buffer instead of staging the same tile again in every iteration.
  //   top level:    %buf = local_alloc
  //   before loop:  local_store %buf, %q ; debug_barrier
  void stage_invariant_operand(Op& dot, int operand) {
    Value* tile = dot.operands[static_cast<std::size_t>(operand)];
    Value* buffer = allocate_at_top_level(loop_, in_shared_memory(tile->type), dot.loc);
    ir::Block scratch;
    ir::Builder b(&scratch);
    b.set_loc(dot.loc);
    b.create(OpKind::LocalStore, {buffer, tile}, {});
    b.create(OpKind::DebugBarrier, {}, {});
    splice(scratch, *loop_.parent, position_of(*loop_.parent, &loop_));
    dot.operands[static_cast<std::size_t>(operand)] = buffer;
  }

  // A stage read transposed (smem_trans); below, a ring of `stages` stages of `load`'s tiles.
  static ir::Type transposed_stage_type(const Op& load) {
    ir::Type t = stage_type(load);
    t.shape = {t.shape.at(1), t.shape.at(0)};
    t.encoding.transposed = true;
    return t;
  }
  // The dots that read rings, each once, in body order.
  std::vector<Op*> ring_readers_in_order(const std::vector<Ring>& rings) const {
    std::vector<Op*> dots;
    for (auto& op : body_.ops)
      for (const Ring& r : rings)
        for (const Reader& reader : r.readers)
          if (reader.dot == op.get() && std::find(dots.begin(), dots.end(), op.get()) == dots.end()) dots.push_back(op.get());
    return dots;
  }
  static ir::Type ring_type(const Op& load, int stages) {
    ir::Type t = stage_type(load);
    t.shape.insert(t.shape.begin(), stages);
    return t;
  }

  // Loads one iteration ahead in registers: a prologue loads iteration 0, the loop carries the
  // tile, the body loads iteration i + 1 where the load was.
  void pipeline_in_registers(Op& load) {
    ir::Block& outer = *loop_.parent;
    ir::Block scratch;
    Value* bound = nullptr;
    {
      ir::Builder b(&scratch);
      b.set_loc(load.loc);
      bound = iters_.narrow_bound(b, 1);
      auto [at, in_range] = iters_.iteration(b, loop_.operands[0], 0);
      loop_.operands.push_back(iters_.clone_load(scratch, load, at, in_range)->result());
      splice(scratch, outer, position_of(outer, &loop_));
    }
    Value* carried = body_.add_arg(load.result()->type);
    loop_.add_result(load.result()->type);
    ir::Builder b(&scratch);
    b.set_loc(load.loc);
    auto [at, in_range] = iters_.iteration(b, body_.args[0].get(), 1, bound);
    Value* next = iters_.clone_load(scratch, load, at, in_range)->result();
    splice(scratch, body_, position_of(body_, &load));
    ir::replace_all_uses(body_, load.result(), carried);
    body_.terminator()->operands.push_back(next);
  }

  // Copies each ringed load depth = num_stages - 1 iterations ahead into a ring of num_stages
  // shared-memory stages (ops.def "Shared memory"); the loads r = 0..n-1 in body order (by dot,
  // then operand), one commit group each:
  //   top level:  %r = local_alloc, one per load
  //   prologue:   (a debug_barrier where the loop is inside another: the last run's reads)
  //               iteration j < depth: copy load r's tile of j into stage j, commit, for each r
  //   body:       before each dot that reads a ring:
  //                 async_wait {pending = n (depth - 1) + (n - 1 - m) [+ n]}  (m: the dot's last
  //                   ring; the groups committed after its iteration-i copy are the n - 1 - m
  //                   later loads of iteration i, all n of iterations i + 1 .. i + depth - 1,
  //                   and, for dots after the first, the n of iteration i + depth)
  //                 debug_barrier  (every thread's copies visible; every thread done with the
  //                                 stage the copies below overwrite, read in iteration i - 1)
  //                 dot(stage i of its rings, ...)
  //               right after the first such dot: copy load r's tile of i + depth into stage
  //                 i + depth, commit, for each r (that stage is iteration i - 1's, which every
  //                 thread finished reading before the barrier ahead of, or inside, that dot; so
  //                 attention's next K and V blocks load during this block's softmax and P·V)
  //   after:      async_wait {pending = 0}  (no copy outlives the loop)
  // Stages are indexed by the iteration count, which smem_index takes modulo the ring's length
  // (so the layout pass may lengthen a ring, wgmma's spare stage, without touching the indices).
  // For a matmul (one dot, both operands ringed) the wait is {pending = 2 (depth - 1)}.
  void pipeline_async(std::vector<Ring>& rings) {
    const int depth = stages_ - 1;
    const auto n = static_cast<std::int64_t>(rings.size());
    Value* bound = start_rings(rings);
    ir::Block scratch;
    Value* count = nullptr;  // the body's iteration count, the stage the dots read
    Op* first_dot = rings.front().readers.front().dot;
    std::int64_t waited = -1;  // the last ring whose stage i the waits so far cover
    for (Op* dot : ring_readers_in_order(rings)) {
      ir::Builder b(&scratch);
      b.set_loc(dot->loc);
      if (!count) count = iters_.iteration_count(b);
      std::int64_t m = -1;  // the dot's last ring
      for (std::int64_t r = 0; r < n; ++r)
        for (const Reader& reader : rings[static_cast<std::size_t>(r)].readers) m = reader.dot == dot ? r : m;
      if (m > waited) {  // (a dot reading only rings an earlier dot waited for needs no wait)
        const bool after_copies = dot != first_dot;
        b.create(OpKind::AsyncWait, {}, {}, {{"pending", n * (depth - 1) + (n - 1 - m) + (after_copies ? n : 0)}});
        // Every thread's copies visible before any thread's dot reads the stage, also where the
        // dot stages its other operand from registers: that one's own barrier (lower_dot) would
        // order the copies too, but on sm_90a the layout pass may leave wgmma's A in registers
        // (analysis::wgmma_a_in_registers), and then the dot has none.
        b.create(OpKind::DebugBarrier, {}, {});
        waited = m;
      }
      for (const Ring& r : rings)
        for (const Reader& reader : r.readers) {
          if (reader.dot != dot) continue;
          Value* view = b.create1(OpKind::SmemIndex, {r.buffer, count}, stage_type(*r.load));
          if (reader.transposed) view = b.create1(OpKind::SmemTrans, {view}, transposed_stage_type(*r.load));
          dot->operands[static_cast<std::size_t>(reader.operand)] = view;
        }
      splice(scratch, body_, position_of(body_, dot));
    }
    copy_ahead(scratch, rings, count, bound);
    splice(scratch, body_, std::next(position_of(body_, first_dot)));
    finish_rings(rings.back().readers.back().dot->loc);
  }

  // The rings of a loop without a dot (pipeline_loop_loads), read back into registers where the
  // first ringed load of the body was; n rings, depth = num_stages - 1:
  //   prologue:  as pipeline_async's
  //   body:      async_wait {pending = n (depth - 1)}  (iteration i's copies landed; those of
  //                i + 1 .. i + depth - 1 may be in flight)
  //              debug_barrier  (every thread's copies visible; every thread done reading the
  //                stage the copies below overwrite, iteration i - 1's)
  //              local_load of stage i of each ring, replacing its load
  //              the copies of iteration i + depth into stage i + depth, a commit each
  //   after:     async_wait {pending = 0}
  void pipeline_into_registers(std::vector<Ring>& rings) {
    const auto n = static_cast<std::int64_t>(rings.size());
    Value* bound = start_rings(rings);
    Op* first = rings.front().load;
    ir::Block scratch;
    ir::Builder b(&scratch);
    b.set_loc(first->loc);
    Value* count = iters_.iteration_count(b);
    b.create(OpKind::AsyncWait, {}, {}, {{"pending", n * (stages_ - 2)}});
    b.create(OpKind::DebugBarrier, {}, {});
    for (const Ring& r : rings) {
      b.set_loc(r.load->loc);
      Value* view = b.create1(OpKind::SmemIndex, {r.buffer, count}, stage_type(*r.load));
      ir::replace_all_uses(body_, r.load->result(), b.create1(OpKind::LocalLoad, {view}, r.load->result()->type));
    }
    copy_ahead(scratch, rings, count, bound);
    splice(scratch, body_, position_of(body_, first));
    finish_rings(rings.back().load->loc);
  }

  // The rings' buffers at the kernel's top level and, before the loop, the copies of iterations
  // 0 .. depth - 1 into stages 0 .. depth - 1, one commit group per load and iteration. Returns
  // the bound of the body's copies (narrow_bound).
  Value* start_rings(std::vector<Ring>& rings) {
    const int depth = stages_ - 1;
    ir::Block& outer = *loop_.parent;
    for (Ring& r : rings) r.buffer = allocate_at_top_level(loop_, ring_type(*r.load, stages_), r.load->loc);
    ir::Block scratch;
    ir::Builder b(&scratch);
    b.set_loc(rings[0].load->loc);
    // Inside an outer loop, the previous run of this loop's readers may still be reading the
    // stages the prologue refills (other warps): a barrier first.
    if (ir::parent_op(loop_)) b.create(OpKind::DebugBarrier, {}, {});
    Value* bound = iters_.narrow_bound(b, depth);
    for (int j = 0; j < depth; ++j) {
      auto [at, in_range] = iters_.iteration(b, loop_.operands[0], j);
      Value* slot = b.int_constant(ir::DType::I32, j);
      for (const Ring& r : rings) iters_.clone_copy(scratch, *r.load, at, in_range, r.buffer, slot);
    }
    splice(scratch, outer, position_of(outer, &loop_));
    return bound;
  }

  // Appends to `scratch` the copies of iteration i + depth (i: `count`) into stage i + depth.
  void copy_ahead(ir::Block& scratch, const std::vector<Ring>& rings, Value* count, Value* bound) {
    const int depth = stages_ - 1;
    ir::Builder b(&scratch);
    b.set_loc(rings[0].load->loc);
    Value* slot = b.create1(OpKind::Add, {count, b.int_constant(ir::DType::I32, depth)}, ir::Type::scalar(ir::DType::I32));
    auto [at, in_range] = iters_.iteration(b, body_.args[0].get(), depth, bound);
    for (const Ring& r : rings) iters_.clone_copy(scratch, *r.load, at, in_range, r.buffer, slot);
  }

  // async_wait {pending = 0} right after the loop: no copy outlives it.
  void finish_rings(const ir::SourceLoc& loc) {
    ir::Block& outer = *loop_.parent;
    ir::Block scratch;
    ir::Builder b(&scratch);
    b.set_loc(loc);
    b.create(OpKind::AsyncWait, {}, {}, {{"pending", std::int64_t{0}}});
    splice(scratch, outer, std::next(position_of(outer, &loop_)));
  }

  Op& loop_;
  ir::Block& body_;
  int stages_;
  LoopIterations iters_;
};

// Every for in `b`, inner loops before the loop holding them. Collected before any is pipelined:
// pipelining a loop inserts ops into its parent block and the kernel's top level (local_alloc),
// which would invalidate an iteration over those blocks' ops (a nested dot loop did: random
// program seed 25215).
void collect_loops(ir::Block& b, std::vector<Op*>& loops) {
  for (auto& op : b.ops) {
    for (auto& r : op->regions) collect_loops(*r->block, loops);
    if (op->kind == OpKind::For) loops.push_back(op.get());
  }
}

}  // namespace

void pipeline_loads(ir::Module& m, int num_stages) {
  std::vector<Op*> loops;
  collect_loops(m.entry(), loops);
  for (Op* loop : loops) {
    const auto marked = loop->attrs.find("num_stages");  // LoopOptions
    const int stages = marked != loop->attrs.end() ? static_cast<int>(std::get<std::int64_t>(marked->second)) : num_stages;
    if (stages >= 2) LoopPipeliner(*loop, stages).run(marked != loop->attrs.end());
  }
  cse(m);  // the loads' shared arithmetic, cloned once per load
  dce(m);  // the original loads and their address arithmetic
}

}  // namespace tessera::transforms

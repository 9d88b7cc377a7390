// What the pipeline pass (pipeline_loads.cpp) builds a loop's later iterations from: the slice of
// the body a load depends on, that slice and the load (or a cp.async copy of its tile) rebuilt for
// another induction value, and the arithmetic of iterations (iv + j*step, whether it is below the
// bound, the iteration count). The pass decides which loads go where and in what order; this
// builds the ops it places.
#pragma once
#include <unordered_map>
#include <utility>
#include <vector>

#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// Where `op` stands in `block` (its parent), for splice.
std::vector<std::unique_ptr<ir::Op>>::iterator position_of(ir::Block& block, const ir::Op* op);

// A local_alloc of `t` at the kernel's top level, before the top-level op that holds `inside`
// (local_alloc's rule: one buffer for the whole program).
ir::Value* allocate_at_top_level(ir::Op& inside, const ir::Type& t, const ir::SourceLoc& loc);

// A tile of type `t` in shared memory: no register layout (the layout pass gives the buffer its
// encoding). stage_type: a stage of a ring that holds `load`'s tiles.
ir::Type in_shared_memory(ir::Type t);
ir::Type stage_type(const ir::Op& load);

// The iterations of one `for` (operands lb, ub, step; step > 0, which the pass checked).
class LoopIterations {
 public:
  explicit LoopIterations(ir::Op& loop) : loop_(loop), body_(*loop.regions[0]->block) {}

  // Records the ops of the body `load` depends on, in body order; false (nothing recorded) when
  // one cannot be recomputed for another iteration (it depends on a carried value, or is not a
  // pure op). The clone_* functions need it to have held for their load.
  bool slice_of(const ir::Op& load);
  // In `scratch`: `load` for induction value `iv`, additionally masked by `in_range` (masked-off
  // elements take the load's `other`, or 0).
  ir::Op* clone_load(ir::Block& scratch, const ir::Op& load, ir::Value* iv, ir::Value* in_range);
  // In `scratch`: the copy of `load`'s tile for `iv` (masked by `in_range` as well; masked-off
  // elements land as 0, which the caller checked `other` is) into stage `slot` of `buffer`, as
  // one commit group of its own.
  void clone_copy(ir::Block& scratch, const ir::Op& load, ir::Value* iv, ir::Value* in_range, ir::Value* buffer,
                  ir::Value* slot);

  // iv + j * step as the iv's type (it may wrap: only used where `in range` holds), and whether it
  // is below ub: `iv < bound` where the caller computed `bound` before the loop (narrow_bound),
  // else in 64 bits.
  std::pair<ir::Value*, ir::Value*> iteration(ir::Builder& b, ir::Value* iv, int j, ir::Value* bound = nullptr);
  // For an induction variable narrower than 64 bits, the bound B with iv + j * step < ub exactly
  // when iv < B (nullptr for 64-bit ones); built where `b` builds, before the loop.
  ir::Value* narrow_bound(ir::Builder& b, int j);
  // i = (iv - lb) / step as an i32, built in the body: the stage iteration i reads.
  ir::Value* iteration_count(ir::Builder& b);

 private:
  struct Access {
    ir::Value* ptr;
    ir::Value* mask;
    ir::Value* other;  // null: none
  };
  Access clone_access(ir::Block& scratch, const ir::Op& load, ir::Value* iv, ir::Value* in_range);

  ir::Op& loop_;
  ir::Block& body_;
  std::unordered_map<const ir::Op*, std::vector<const ir::Op*>> slices_;
};

}  // namespace tessera::transforms

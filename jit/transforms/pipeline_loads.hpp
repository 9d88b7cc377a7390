#pragma once
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// Software pipelining of the loads that feed a loop's dot (num_stages >= 2: the pass context's,
// which is the launch's): each such load of iteration i+1 is issued in iteration i, before the dot of
// iteration i, and carried around the loop in registers, so that its global-memory latency
// overlaps the tensor-core work; a prologue loads iteration 0 before the loop.
//
//   for iv in [lb, ub) step s:  a = load(p(iv), m(iv)); acc = dot(a, ..., acc)
// becomes
//   a0 = load(p(lb), m(lb) & (lb < ub))
//   for iv, a_cur in ...:       a_next = load(p(iv + s), m(iv + s) & (iv + s < ub)); acc = dot(a_cur, ..., acc)
//                               yield ..., a_next
//
// Two forms:
// - asynchronous, when both of a dot's operands come straight from such loads, used by nothing
//   else, whose masked-off elements are 0: loads num_stages - 1 iterations ahead, the body's
//   load placed after the dot. The loads are marked {async_ring, async_slot} (slot j for the
//   prologue's iteration j, -1 for the body's: (i + num_stages - 1) mod num_stages) and the dot
//   {async_ring_a, async_ring_b, async_stages, async_depth}: the lowering turns the loads into
//   cp.async copies into a ring of num_stages shared-memory stages that the dot reads, with one
//   wait and one barrier per iteration (lower_dot.cpp); the carried tiles then live in the ring,
//   not in registers. The IR means the same either way: the interpreter ignores the marks.
// - otherwise, in registers, one iteration ahead.
// Only loads whose address, mask and `other` depend on the induction variable and on values
// defined outside the loop (not on carried values or on memory written in the loop: a loop that
// stores or runs atomics is left alone), in loops with a positive constant step. `iv + j*s < ub`
// is computed exactly (in 64 bits; in the loop as iv < a bound computed before it), so
// prefetches past the end are masked off even where the i32 wraps.
void pipeline_dot_loads(ir::Module& m, int num_stages);

}  // namespace tessera::transforms

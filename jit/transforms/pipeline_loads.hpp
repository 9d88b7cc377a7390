#pragma once
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// Software pipelining of the loads that feed a loop's dot (num_stages >= 2; the module's
// num_stages): each such load of iteration i+1 is issued in iteration i, before the dot of
// iteration i, and carried around the loop in registers, so that its global-memory latency
// overlaps the tensor-core work; a prologue loads iteration 0 before the loop.
//
//   for iv in [lb, ub) step s:  a = load(p(iv), m(iv)); acc = dot(a, ..., acc)
// becomes
//   a0 = load(p(lb), m(lb) & (lb < ub))
//   for iv, a_cur in ...:       a_next = load(p(iv + s), m(iv + s) & (iv + s < ub)); acc = dot(a_cur, ..., acc)
//                               yield ..., a_next
//
// Only loads whose address, mask and `other` depend on the induction variable and on values
// defined outside the loop (not on carried values or on memory written in the loop: a loop that
// stores or runs atomics is left alone), in loops with a positive constant step. `iv + s < ub` is
// computed in 64 bits, so the last iteration's prefetch is masked off even where iv + s would
// wrap an i32. Prefetch distance 1 whatever num_stages >= 2: deeper rings belong in shared
// memory with cp.async (notes/tensor-cores.md).
void pipeline_dot_loads(ir::Module& m);

}  // namespace tessera::transforms

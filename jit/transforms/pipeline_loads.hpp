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
// Per dot operand:
// - a load whose every use is a dot operand, directly or through trans, and whose masked-off
//   elements are 0: copied num_stages - 1 iterations ahead into a ring of num_stages
//   shared-memory stages (local_alloc, smem_index, async_copy, async_commit), each dot reading
//   its stage (through smem_trans where it took the transpose: one copy serves attention
//   backward's Sᵀ = K·Qᵀ and dK += dSᵀ·Q) after an async_wait and a debug_barrier (once per ring
//   and iteration: a later dot reading the same stage needs neither); the body's copies go right
//   after the loop's first ringed dot, an async_wait {pending = 0} after the loop. All rings of a loop (each dot's, one or both operands)
//   share one schedule (pipeline_loads.cpp, pipeline_async, has it op for op). The interpreter
//   runs this form and checks every wait. The layout pass then gives each ring its encoding
//   (padded rows for mma.sync, a swizzle for wgmma).
// - a tile defined outside the loop (attention's Q): stored once before the loop into a buffer
//   the dot reads in every iteration (local_store, then a debug_barrier), instead of the dot
//   staging it again in each.
// - another load: prefetched in registers, one iteration ahead.
// Only loads whose address, mask and `other` depend on the induction variable and on values
// defined outside the loop (not on carried values or on memory written in the loop: a loop that
// stores or runs atomics is left alone), in loops with a positive constant step. `iv + j*s < ub`
// is computed exactly (in 64 bits; in the loop as iv < a bound computed before it), so
// prefetches past the end are masked off even where the i32 wraps.
void pipeline_dot_loads(ir::Module& m, int num_stages);

}  // namespace tessera::transforms

#pragma once
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// Software pipelining of the loads that feed a loop's dot (num_stages >= 2: the pass context's,
// which is the launch's; or the loop's own, below): each such load of iteration i+1 is issued in iteration i, before the dot of
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
// A loop that asks for pipelining itself ({num_stages = N}, ts::LoopOptions; N overrides the
// pass context's for that loop, 1 leaves it alone) is pipelined also without a dot (a persistent
// row loop that stores each row: layer norm's backward): each tile load of its body whose
// masked-off elements are 0 goes into a ring as above and is read back into registers
// (local_load) after the wait and barrier, where the first such load was; each scalar load is
// prefetched in registers. There, as in Triton, a store through one kernel argument is assumed
// not to write what a load through another reads; a load through an argument the loop stores
// through, or any load of a loop with other writes (atomics) or barriers, stays as written.
// Only loads whose address, mask and `other` depend on the induction variable and on values
// defined outside the loop (not on carried values or, for a loop with a dot, on memory written in
// the loop: such a loop that stores or runs atomics is left alone), in loops whose step is a
// positive constant or num_programs. `iv + j*s < ub` is computed exactly (in 64 bits; in the loop
// as iv < a bound computed before it), so prefetches past the end are masked off even where the
// i32 wraps.
void pipeline_loads(ir::Module& m, int num_stages);

}  // namespace tessera::transforms

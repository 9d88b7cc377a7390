// The target's half of a ring of shared memory (ops.def "Shared memory"), part of the layout pass:
// the pipeline pass builds rings without knowing how a dot will read them; once the layout pass has
// marked each dot (wgmma or not) and laid out the copies' tiles, this decides
// - each buffer a dot reads: its encoding, #padded<16> (rows 16 bytes apart beyond their length,
//   ldmatrix's eight rows in distinct banks: mma.sync and fma loops) or, for wgmma,
//   #nvmma<W[, transposed]> with its contiguous dim the one its copies run along (their tiles'
//   layout order) and W = min(128, that dim's bytes);
// - for a wgmma dot reading a view of a buffer that local_store writes: a fence_async_shared
//   right after each such store (wgmma's async proxy sees what the threads stored; none for rings,
//   which cp.async fills: shared_encodings.cpp says why);
// - for a wgmma dot that reads both operands from rings and may keep its wgmmas in flight
//   (analysis::wgmma_may_stay_in_flight, recorded as {wgmma_in_flight = 1}): either a ring one
//   stage longer (analysis::wgmma_spare_stage; the pipeline pass indexes stages by the iteration
//   count, which smem_index takes modulo the ring's length) or a debug_barrier right after the dot;
// - for a wgmma dot that the wait of its loop body's first wgmma dot may retire instead of its own
//   (analysis::wgmma_may_defer, recorded as {wgmma_in_flight = 2}; attention's P·V): its rings one
//   stage longer or a debug_barrier right after that first dot, unless a synchronous wgmma dot
//   later in the body retires it within its iteration (wgmma_in_flight.hpp).
// - for a dot that does not run on wgmma reading a transposed view (smem_trans) as a: a
//   local_load of the view into registers right before it, which the dot stages (mma.sync and
//   the fma loops read a's padded rows along K only; b they read either way).
// A buffer that two dots would read in two encodings, or that the IR already gives another
// encoding, is a ProgramError naming the dot's line.
#pragma once
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

void encode_shared_buffers(ir::Module& m, int warp_size);

}  // namespace tessera::transforms

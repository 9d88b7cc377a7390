#pragma once
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// Moves each load (with the address, mask and `other` computations it needs) up its block to just
// after the last op it depends on, the last earlier load, or the last op that may write memory
// (store, atomic, or a for/if/reduce/scan holding one), so that its latency overlaps the work
// before it. Loads never move across writes, so aliasing cannot change what they read.
//
// A tile's load also stays below a reduction or scan earlier in its block (a scalar's, one
// register, still moves up; an if holding one does not stop it): across warps a reduction
// ends in barriers, and a tile loaded above it stays in registers through all of it. Layouts are
// not known yet here, so reductions within one warp stop it too. Layer norm's forward (w and b
// loaded after the variance) took 64 registers instead of 48 that way, four programs per SM
// instead of five, and ran at 3460 GB/s instead of 3765 (fp16 32768x4096, H200, session 27);
// RMSNorm's (one reduction, one load) ran at the same speed either way. Other programs' warps
// hide the load's latency instead.
//
// Nor does a tile's load move above a loop (for, do_while) earlier in its block: the loop's
// iterations would all run with the tile in registers. The fused matmul's bias (64 f32 per thread
// in the accumulator's layout at 128x256/8 warps) hoisted above the K loop spilled 20 bytes at
// 255 registers (ptxas, sm_90a); loaded after the loop it spills nothing. A loop is long enough
// that a load after it costs a small part of the program's time.
void hoist_loads(ir::Module& m);

}  // namespace tessera::transforms

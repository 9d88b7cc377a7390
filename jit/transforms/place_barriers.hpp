// Barrier placement (issue 9 §2): the pass that writes into the IR every barrier that shared
// memory needs, so that the lowering places none of its own.
#pragma once
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// Walks the laid-out kernel with analysis::SharedMemoryPlan (the regions every op and buffer gets,
// the accesses pending since the last barrier; jit/analysis/shared_memory.hpp) and, where an
// access touches bytes that a pending one touched and one of the two writes:
// - before a local_store or local_load, inserts a debug_barrier;
// - before the writes of an op that moves elements between threads through its own region
//   (convert_layout, reductions and scans across warps, shape ops, a dot that stages its operands,
//   atomics handing old values to replicas), sets its attribute {barrier_before_writes = 1}: the
//   barrier belongs between the op's thread-private work (a reduction's shuffles) and its first
//   shared store, which no op boundary marks. The barrier between such an op's writes and its
//   reads is part of the op and always emitted.
// The asynchronous rings of a pipelined loop are ordered by the waits and barriers the pipeline
// and layout passes write (they know the schedule: which stage is in flight); this pass counts
// every debug_barrier as a barrier and a loop that used a buffer as a write of all of it.
// Run last, after every pass that moves or adds ops (target_pipeline() ends with it); running it
// twice adds nothing. The lowering checks that nothing is missing (an InternalError otherwise).
// On a module without layouts (before the layout pass) it does nothing.
void place_barriers(ir::Module& m);

}  // namespace tessera::transforms

#pragma once
// Which wgmma dots keep their wgmmas in flight past their own issue, and what orders them. Two
// forms; the layout pass decides (on rings as the pipeline pass made them) and records the form
// as the dot's attribute {wgmma_in_flight = 1 | 2}, which the lowering reads, so that what the
// layout pass then does to the rings cannot change the answer.
//
// Form 1 (a mainloop, as Triton's and CUTLASS's): an asynchronous wgmma dot whose accumulator is
// only carried around its loop (the loop's block argument feeds nothing but the dot, the dot's
// result nothing but the yield) waits only for the previous iteration's wgmmas (wait_group 1
// after it, wait_group 0 after the loop), when its rings follow the pipeline pass's schedule:
// both views index stage s of rings of one length S >= 2, and the only writes to the rings in the
// loop are copies after the dot into stage s + S - 1 (the stage of iteration i - 1, whose wgmmas
// may still run in another warpgroup). Stage i is the iteration count (iv - lb) / step as the
// pipeline pass computes it. Then
// - with a spare stage (the ring one stage longer than num_stages, where that leaves as many
//   programs resident per SM), every warpgroup finished reading i - 2's stage before the barrier
//   at the top of iteration i;
// - without, a second barrier after the wait_group 1 of iteration i (every warpgroup is then done
//   with i - 1's) precedes the copies, as Triton's mainloop has.
//
// Form 2 (attention's P·V, the backward's dV and dK; Triton's rule for a dot whose accumulator
// is used after another dot's wait): a wgmma dot D with no wait of its own, retired by the
// wait_group 0 of the loop body's first wgmma dot W, a synchronous one (groups complete in
// order, so W's wait of iteration i + 1 also completes D of iteration i). It requires:
// - D and W at the top level of a for's body, W before D, and a debug_barrier before W (the
//   pipeline pass's, after its copy wait);
// - D's result feeds only the yield; every use of that loop-carried value (the block argument)
//   comes after W, where the lowering passes it through W's wait (tied) so that nothing reads
//   the accumulators before they are complete;
// - B from a ring view; A from a ring view or from registers (wgmma_a_in_registers) computed
//   from W's result, so that the registers of A are written again only after the wait that
//   retires the wgmma reading them;
// - (at the decision) each ring D reads indexed by the iteration count i, and written in the loop
//   only by copies after W into stage i + S - 1. Those copies overwrite the stage of i - 1, whose
//   D another warpgroup may still run until its own W of iteration i: unless a synchronous wgmma
//   dot after D retires D within its own iteration (before the next iteration's barrier), the
//   layout pass lengthens D's rings by a spare stage (where that keeps the programs per SM) or
//   puts a debug_barrier right after W.
#include <vector>

#include "jit/ir/ir.hpp"

namespace tessera::analysis {

// Form 1 at the decision: the structure and the rings' schedule.
bool wgmma_may_stay_in_flight(const ir::Op& dot);
// Form 1's spare stage: the rings one stage longer keep the programs per SM.
bool wgmma_spare_stage(const ir::Op& dot);
// Form 2's W (null where the structure does not hold), and form 2 at the decision.
const ir::Op* wgmma_retiring_dot(const ir::Op& dot);
bool wgmma_may_defer(const ir::Op& dot);
// Whether a synchronous wgmma dot after a form-2 dot in its body retires it within its iteration.
bool wgmma_retired_in_iteration(const ir::Op& dot);
// The decision, where the structure still holds (IR that says so of another dot, hand-written or
// changed since, runs synchronously, which is always safe): either form, or form 2 only.
bool wgmma_in_flight(const ir::Op& dot);
bool wgmma_deferred(const ir::Op& dot);
// Whether one more stage in each of `rings` keeps the programs per SM that the module's shared
// buffers allow (228 KB an SM, 1 KB reserved a program).
bool spare_stages_keep_programs(const ir::Module& m, const std::vector<const ir::Op*>& rings);
// The loop-carried accumulators (block arguments) of the form-2 dots that `w` retires: what the
// lowering passes through w's wait.
std::vector<const ir::Value*> wgmma_accumulators_retired_by(const ir::Op& w);

}  // namespace tessera::analysis

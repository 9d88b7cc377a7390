#include "jit/transforms/place_barriers.hpp"

#include "jit/analysis/shared_memory.hpp"
#include "jit/transforms/rewrite.hpp"

namespace tessera::transforms {
using ir::Op;
using ir::OpKind;

namespace {
// Whether every tile has a layout: shared memory is planned on laid-out IR only (before the layout
// pass, a module's conversions and their regions do not exist yet).
bool laid_out(ir::Module& m) {
  bool all = true;
  ir::walk(m.entry(), [&](const Op& op) {
    for (const auto& r : op.results) all = all && (!r->type.is_tile() || r->type.shared || !r->type.layout.is_none());
  });
  return all;
}
}  // namespace

void place_barriers(ir::Module& m) {
  if (!laid_out(m)) return;
  const analysis::SharedMemoryPlan plan(m);
  // The walk assumed a barrier at each missing point (it cleared its pending accesses there), so
  // placing them all gives the IR it walked.
  for (const auto& [op, phase] : plan.missing_barriers()) {
    Op& o = const_cast<Op&>(*op);
    // Ops that do not read the attribute: shared accesses, and dots that stage nothing.
    if (analysis::is_shared_access(o) || !plan.has_region(o)) insert_marker(o, OpKind::DebugBarrier, o.loc);
    else o.attrs[analysis::kBarrierBeforeWrites] = std::int64_t{1};
  }
}

}  // namespace tessera::transforms

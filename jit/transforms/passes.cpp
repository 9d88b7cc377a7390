#include "jit/transforms/passes.hpp"
#include "jit/transforms/hoist_loads.hpp"
#include "jit/transforms/assign_layouts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "jit/ir/verifier.hpp"
#include "jit/transforms/canonicalize.hpp"
#include "jit/transforms/cse.hpp"
#include "jit/transforms/dce.hpp"
#include "jit/transforms/legalize_fp8.hpp"
#include "jit/transforms/pipeline_loads.hpp"
#include "jit/transforms/sink.hpp"
#include "tessera/error.hpp"

namespace tessera::transforms {
namespace {

constexpr PassInfo kPasses[] = {
    {"canonicalize", "fold constants, apply local identities, inline if with a constant condition", canonicalize},
    {"cse", "merge equal pure ops where the first dominates the second", cse},
    {"dce", "remove ops without side effects whose results are unused", dce},
    {"hoist-loads", "move loads up to the last write or dependency, to overlap their latency", hoist_loads},
    {"pipeline", "with num_stages >= 2: issue the loads feeding a loop's dot one iteration ahead", pipeline_dot_loads},
    {"legalize-fp8", "compute fp8 ops in f32: casts around them (the lowering keeps fp8 in moves and casts only)", legalize_fp8},
    // The layout pass as the NVIDIA pipelines run it (warps of 32; sm_80, and sm_90a with wgmma),
    // for tessera-opt and golden tests.
    {"coalesce", "give tiles layouts: coalesced for memory accesses, blocked or slice elsewhere; insert conversions",
     [](ir::Module& m) { assign_layouts(m, analysis::target_info("sm_80")); }},
    {"coalesce-sm90a", "coalesce as for sm_90a: dots that can run on wgmma are marked and take its accumulator layout",
     [](ir::Module& m) { assign_layouts(m, analysis::target_info("sm_90a")); }},
    {"sink", "move pure ops whose first user follows a loop or a conversion down to it (after the layout pass)", sink_pure_ops},
};

}  // namespace

const PassInfo* find_pass(std::string_view name) {
  for (const auto& p : kPasses)
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string> pass_names() {
  std::vector<std::string> names;
  for (const auto& p : kPasses) names.emplace_back(p.name);
  return names;
}

std::vector<std::string> default_pipeline() { return {"canonicalize", "cse", "dce", "hoist-loads", "pipeline"}; }

void run_pass_pipeline(ir::Module& m, std::span<const std::string> names) {
  std::vector<const PassInfo*> passes;
  for (const auto& name : names) {
    const PassInfo* p = find_pass(name);
    if (!p) throw ProgramError(fmt::format("unknown pass '{}' (known: {})", name, fmt::join(pass_names(), ", ")));
    passes.push_back(p);
  }
  for (const PassInfo* p : passes) {
    p->run(m);
    try {
      ir::verify(m);
    } catch (const ProgramError& e) {
      throw InternalError(fmt::format("pass '{}' produced invalid IR: {}", p->name, e.what()));
    }
  }
}

}  // namespace tessera::transforms

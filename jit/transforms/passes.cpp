#include "jit/transforms/passes.hpp"
#include "jit/transforms/hoist_loads.hpp"
#include "jit/transforms/assign_layouts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "jit/ir/verifier.hpp"
#include "jit/transforms/canonicalize.hpp"
#include "jit/transforms/cse.hpp"
#include "jit/transforms/dce.hpp"
#include "jit/transforms/expand_conversions.hpp"
#include "jit/transforms/legalize_fp8.hpp"
#include "jit/transforms/pipeline_loads.hpp"
#include "jit/transforms/place_barriers.hpp"
#include "jit/transforms/sink.hpp"
#include "tessera/error.hpp"

namespace tessera::transforms {
namespace {

// Passes that need nothing of the context beyond the module take it as unused.
template <void (*Pass)(ir::Module&)>
void module_only(ir::Module& m, const PassContext&) {
  Pass(m);
}

constexpr PassInfo kPasses[] = {
    {"canonicalize", "fold constants, apply local identities, inline if with a constant condition", module_only<canonicalize>},
    {"cse", "merge equal pure ops where the first dominates the second", module_only<cse>},
    {"dce", "remove ops without side effects whose results are unused", module_only<dce>},
    {"hoist-loads", "move loads up to the last write or dependency, to overlap their latency", module_only<hoist_loads>},
    {"pipeline", "with num_stages >= 2: issue the loads feeding a loop's dot one iteration ahead",
     [](ir::Module& m, const PassContext& c) { pipeline_loads(m, c.num_stages); }},
    {"legalize-fp8", "compute fp8 ops in f32: casts around them (the lowering keeps fp8 in moves and casts only)", module_only<legalize_fp8>},
    {"coalesce", "give tiles layouts: coalesced for memory accesses, blocked or slice elsewhere; insert conversions",
     [](ir::Module& m, const PassContext& c) { assign_layouts(m, c.target); }},
    {"sink", "move pure ops whose first user follows a loop or a conversion down to it (after the layout pass)", module_only<sink_pure_ops>},
    {"expand-conversions", "convert_layout of 2-D tiles across threads as local_alloc, local_store, local_load", module_only<expand_conversions>},
    {"place-barriers", "write the barriers shared memory needs: debug_barrier before local_store/local_load, {barrier_before_writes} on ops", module_only<place_barriers>},
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
std::vector<std::string> target_pipeline() { return {"legalize-fp8", "coalesce", "sink", "expand-conversions", "place-barriers"}; }

PassContext pass_context(const ir::Module& m, const std::string& target_name) {
  return PassContext{.target = analysis::target_info(target_name), .num_warps = m.num_warps, .num_stages = m.num_stages};
}

void run_pass_pipeline(ir::Module& m, std::span<const std::string> names, const PassContext& context,
                       void (*after_each)(const ir::Module&, std::string_view)) {
  std::vector<const PassInfo*> passes;
  for (const auto& name : names) {
    const PassInfo* p = find_pass(name);
    if (!p) throw ProgramError(fmt::format("unknown pass '{}' (known: {})", name, fmt::join(pass_names(), ", ")));
    passes.push_back(p);
  }
  for (const PassInfo* p : passes) {
    p->run(m, context);
    try {
      ir::verify(m);
    } catch (const ProgramError& e) {
      throw InternalError(fmt::format("pass '{}' produced invalid IR: {}", p->name, e.what()));
    }
    if (after_each) after_each(m, p->name);
  }
}

void run_pass_pipeline(ir::Module& m, std::span<const std::string> names) {
  run_pass_pipeline(m, names, pass_context(m, kDefaultPassTarget));
}

}  // namespace tessera::transforms

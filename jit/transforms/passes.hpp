// The registry of IR passes by name, for tessera-opt, the golden tests and the compile driver.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "jit/analysis/layouts.hpp"
#include "jit/ir/ir.hpp"

namespace tessera::transforms {

// What every pass may know of the compile it is part of: the target's capabilities (warp size,
// wgmma) and the launch's num_warps and num_stages (the module's, which the tracer recorded).
struct PassContext {
  analysis::TargetInfo target;
  int num_warps = 4;
  int num_stages = 1;
};
// The context of compiling `m` for `target_name` (an NVIDIA arch, a gfx name, "host"...).
PassContext pass_context(const ir::Module& m, const std::string& target_name);
// The target of a context where none is given: the target-independent passes (default_pipeline,
// which the interpreter's IR goes through as well) do not read it; tessera-opt starts from it.
inline constexpr const char* kDefaultPassTarget = "sm_80";

struct PassInfo {
  std::string_view name;
  std::string_view summary;  // one line, for --list-passes
  void (*run)(ir::Module&, const PassContext&);
};

const PassInfo* find_pass(std::string_view name);  // null when unknown
std::vector<std::string> pass_names();             // in registration order
// The compile, in order: default_pipeline() for every executor (the interpreter runs its result),
// then target_pipeline() before code generation (layouts are the lowering's business only).
std::vector<std::string> default_pipeline();  // canonicalize, cse, dce, hoist-loads, pipeline
std::vector<std::string> target_pipeline();   // legalize-fp8, coalesce, sink, expand-conversions, place-barriers

// Runs the named passes in order on a verified module, verifying after each. An unknown name is a
// ProgramError (before any pass runs); a pass that leaves invalid IR is an InternalError naming it.
// `after_each(name)`, when given, runs after each pass has been verified (the compile's
// TESSERA_DUMP=ir printing). Without a context: the module's own, for kDefaultPassTarget.
void run_pass_pipeline(ir::Module& m, std::span<const std::string> names, const PassContext& context,
                       void (*after_each)(const ir::Module&, std::string_view) = nullptr);
void run_pass_pipeline(ir::Module& m, std::span<const std::string> names);

}  // namespace tessera::transforms

// The compile pipeline, one linear script: trace -> passes -> layouts -> LLVM -> device binary,
// logging each stage when TESSERA_DUMP asks for it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "jit/ir/ir.hpp"
#include "jit/lower/codegen.hpp"
#include "tessera/launch.hpp"

namespace tessera::runtime {

// The facts a launch's arguments prove (Triton's specialization), one per kernel argument.
std::vector<ir::ArgFacts> specialization_facts(const detail::KernelDef& def, std::span<const ArgValue> args);
// The same into `facts` (resized, not reallocated once large enough): the launch fast path.
void specialization_facts_into(const detail::KernelDef& def, std::span<const ArgValue> args,
                               std::vector<ir::ArgFacts>& facts);

// Traces the kernel and runs the target-independent passes (canonicalize, cse, dce), verifying.
std::unique_ptr<ir::Module> trace_and_optimize(const detail::KernelDef& def, const MetaValues& meta,
                                               const std::vector<ir::ArgFacts>& facts, int num_warps);

// trace_and_optimize, then layouts and code generation for `target` ("sm_90a", "gfx942", ...).
// When `ir_with_layouts` is given, it receives the tile IR as lowered (for tests and tools).
lower::DeviceBinary compile_for_target(const detail::KernelDef& def, const MetaValues& meta,
                                       const std::vector<ir::ArgFacts>& facts, int num_warps,
                                       const std::string& target, std::string* ir_with_layouts = nullptr);

}  // namespace tessera::runtime

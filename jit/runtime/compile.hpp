// The compile pipeline, one linear script: trace -> passes -> layouts -> LLVM -> device binary,
// logging each stage when TESSERA_DUMP asks for it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "jit/ir/ir.hpp"
#include "jit/lower/codegen.hpp"
#include "tessera/launch.hpp"
#include "tessera/runtime.hpp"

namespace tessera::runtime {

// The facts a launch's arguments prove (Triton's specialization), one per kernel argument.
std::vector<ir::ArgFacts> specialization_facts(const detail::KernelDef& def, std::span<const ArgValue> args);
// The same into `facts` (resized, not reallocated once large enough): the launch fast path.
void specialization_facts_into(const detail::KernelDef& def, std::span<const ArgValue> args,
                               std::vector<ir::ArgFacts>& facts);

// Where one compile's time went, in milliseconds (TESSERA_DUMP=times; ResourceReport::times).
struct CompileTimes {
  double trace = 0, passes = 0, codegen = 0, assemble = 0, disk = 0, load = 0;
  double total() const { return trace + passes + codegen + assemble + disk + load; }
  std::string str() const;
};

// Traces the kernel into tile IR and verifies it (TESSERA_DUMP=ir prints it).
// num_stages is recorded in the module for the pipelining pass.
std::unique_ptr<ir::Module> trace_verified(const detail::KernelDef& def, const MetaValues& meta,
                                           const std::vector<ir::ArgFacts>& facts, int num_warps, int num_stages = 1);
// The target-independent passes (canonicalize, cse, dce, hoist-loads, pipeline), verifying after them.
// Without `keep_asserts` (compiled code outside debug mode: debug_checks) the device_asserts go
// first, so that they neither cost code nor keep the passes from moving loads across them.
void optimize(ir::Module& m, bool keep_asserts);
// Traces the kernel and runs the target-independent passes, verifying.
std::unique_ptr<ir::Module> trace_and_optimize(const detail::KernelDef& def, const MetaValues& meta,
                                               const std::vector<ir::ArgFacts>& facts, int num_warps, int num_stages = 1);
// Layouts and code generation of an optimized module for `target` ("sm_90a", "gfx942", ...).
// When `ir_with_layouts` is given, it receives the tile IR as lowered (for tests and tools).
lower::DeviceBinary codegen(ir::Module& m, const std::string& target, const CompileOptions& options,
                            std::string* ir_with_layouts = nullptr);
// A hash of every source file of tessera's compiler (dsl/, jit/, backends/), made at build time
// (cmake/build_id.cmake): a rebuilt compiler has another identity.
const char* build_identity();
// The disk cache key of a specialization: the traced IR (it holds the meta values, num_warps and
// the argument facts), the target, every compile option, the versions of tessera and LLVM, and
// the build identity (so that a cache folder reused across rebuilds never serves old code).
std::string disk_cache_key(const std::string& traced_ir, const std::string& target, const LaunchOptions& opts);

}  // namespace tessera::runtime

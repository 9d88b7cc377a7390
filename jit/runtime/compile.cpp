#include "jit/runtime/compile.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "dsl/src/tracer.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/runtime/options.hpp"
#include "jit/transforms/assign_layouts.hpp"
#include "jit/transforms/passes.hpp"

namespace tessera::runtime {

std::vector<ir::ArgFacts> specialization_facts(const detail::KernelDef& def, std::span<const ArgValue> args) {
  std::vector<ir::ArgFacts> facts;
  specialization_facts_into(def, args, facts);
  return facts;
}

void specialization_facts_into(const detail::KernelDef& def, std::span<const ArgValue> args,
                               std::vector<ir::ArgFacts>& facts) {
  facts.assign(args.size(), ir::ArgFacts{});
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i < def.args.size() && def.args[i].do_not_specialize) continue;
    const ArgValue& a = args[i];
    if (a.kind == ArgValue::Kind::Pointer) {
      auto addr = reinterpret_cast<std::uintptr_t>(a.p);
      facts[i].divisibility = addr % 16 == 0 ? 16 : 1;
    } else if (a.kind == ArgValue::Kind::Int) {
      facts[i].divisibility = a.i % 16 == 0 ? 16 : 1;
      facts[i].equal_to_one = a.i == 1;
    }
  }
}

namespace {
void dump(const char* stage, const std::string& name, const std::string& text) {
  std::fprintf(stderr, "// ----- tessera: %s of kernel '%s' -----\n%s\n", stage, name.c_str(), text.c_str());
}
}  // namespace

std::unique_ptr<ir::Module> trace_and_optimize(const detail::KernelDef& def, const MetaValues& meta,
                                               const std::vector<ir::ArgFacts>& facts, int num_warps) {
  const EnvOptions& env = env_options();
  auto m = trace_kernel(def, meta, facts, num_warps);
  ir::verify(*m);
  if (env.dump_ir) dump("traced IR", def.name, ir::print(*m));
  transforms::run_pass_pipeline(*m, transforms::default_pipeline());
  ir::verify(*m);
  if (env.dump_ir) dump("optimized IR", def.name, ir::print(*m));
  return m;
}

lower::DeviceBinary compile_for_target(const detail::KernelDef& def, const MetaValues& meta,
                                       const std::vector<ir::ArgFacts>& facts, int num_warps,
                                       const std::string& target, std::string* ir_with_layouts) {
  const EnvOptions& env = env_options();
  auto m = trace_and_optimize(def, meta, facts, num_warps);
  transforms::assign_layouts(*m, lower::target_warp_size(target));
  ir::verify(*m);
  if (env.dump_ir) dump("IR with layouts", def.name, ir::print(*m));
  if (ir_with_layouts) *ir_with_layouts = ir::print(*m);
  lower::DeviceBinary bin = lower::compile_to_device(*m, target, env.dump_llvm);
  if (env.dump_llvm) dump("LLVM IR", def.name, bin.llvm_ir);
  if (env.dump_ptx && bin.format == "ptx") dump("PTX", def.name, bin.assembly);
  if (env.dump_amdgcn && bin.format == "hsaco") dump("AMDGCN", def.name, bin.assembly);
  return bin;
}

}  // namespace tessera::runtime

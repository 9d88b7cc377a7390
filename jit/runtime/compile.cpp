#include "jit/runtime/compile.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "dsl/src/tracer.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/runtime/disk_cache.hpp"
#include "jit/runtime/options.hpp"
#include "jit/transforms/passes.hpp"
#include "jit/transforms/rewrite.hpp"

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

std::string CompileTimes::str() const {
  return fmt::format("{:.1f} ms: trace {:.1f}, passes {:.1f}, codegen (LLVM) {:.1f}, assemble (ptxas) {:.1f}, "
                     "disk cache {:.1f}, load {:.1f}",
                     total(), trace, passes, codegen, assemble, disk, load);
}

std::unique_ptr<ir::Module> trace_verified(const detail::KernelDef& def, const MetaValues& meta,
                                           const std::vector<ir::ArgFacts>& facts, int num_warps, int num_stages) {
  auto m = trace_kernel(def, meta, facts, num_warps);
  m->num_stages = num_stages;
  ir::verify(*m);
  if (env_options().dump_ir) dump("traced IR", def.name, ir::print(*m));
  return m;
}

// Runs `passes` one at a time, each verified, and under TESSERA_DUMP=ir prints the IR after every
// one, as Halide's Lower.cpp logs each step: the compile's one script, for the build, compile_only
// and the interpreter alike (optimize, then codegen's target passes).
void run_logged(ir::Module& m, const std::vector<std::string>& passes, const transforms::PassContext& context) {
  auto print_after = [](const ir::Module& mod, std::string_view pass) {
    dump(fmt::format("IR after pass '{}'", pass).c_str(), mod.name, ir::print(mod));
  };
  transforms::run_pass_pipeline(m, passes, context, env_options().dump_ir ? +print_after : nullptr);
}

void optimize(ir::Module& m, bool keep_asserts) {
  if (!keep_asserts) transforms::erase_asserts(m);
  // Target-independent: the context's target is not read (the interpreter runs this IR too).
  run_logged(m, transforms::default_pipeline(), transforms::pass_context(m, transforms::kDefaultPassTarget));
  ir::verify(m);
  if (env_options().dump_ir) dump("optimized IR", m.name, ir::print(m));
}

std::unique_ptr<ir::Module> trace_and_optimize(const detail::KernelDef& def, const MetaValues& meta,
                                               const std::vector<ir::ArgFacts>& facts, int num_warps, int num_stages) {
  auto m = trace_verified(def, meta, facts, num_warps, num_stages);
  optimize(*m, /*keep_asserts=*/true);  // the interpreter checks asserts in every mode
  return m;
}

lower::DeviceBinary codegen(ir::Module& m, const std::string& target, const CompileOptions& options,
                            std::string* ir_with_layouts) {
  const EnvOptions& env = env_options();
  lower::target_warp_size(target);  // an unknown target is an Error here, before any pass
  run_logged(m, transforms::target_pipeline(), transforms::pass_context(m, target));
  if (env.dump_ir) dump("IR with layouts", m.name, ir::print(m));
  if (ir_with_layouts) *ir_with_layouts = ir::print(m);
  lower::CodegenOptions cg{.max_registers = options.maxnreg,
                           .line_info = options.line_info,
                           .fp_fusion = options.fp_fusion,
                           .debug = debug_checks(options),
                           .keep_llvm_ir = env.dump_llvm};
  lower::DeviceBinary bin = lower::compile_to_device(m, target, cg);
  if (env.dump_llvm) dump("LLVM IR", m.name, bin.llvm_ir);
  if (env.dump_ptx && bin.format == "ptx") dump("PTX", m.name, bin.assembly);
  if (env.dump_amdgcn && bin.format == "hsaco") dump("AMDGCN", m.name, bin.assembly);
  return bin;
}

std::string disk_cache_key(const std::string& traced_ir, const std::string& target, const LaunchOptions& opts) {
  return make_key_text({{"ir", traced_ir},
                        {"target", target},
                        {"num_stages", std::to_string(opts.num_stages)},
                        {"opt_level", std::to_string(opts.compile.opt_level)},
                        {"maxnreg", std::to_string(opts.compile.maxnreg)},
                        {"line_info", opts.compile.line_info ? "1" : "0"},
                        {"fp_fusion", opts.compile.fp_fusion ? "1" : "0"},
                        {"debug", debug_checks(opts.compile) ? "1" : "0"},
                        {"tessera", TESSERA_VERSION},
                        {"build", build_identity()},
                        {"llvm", lower::llvm_version()},
                        {"math", lower::device_library_fingerprint(target)}});
}

}  // namespace tessera::runtime

#include "jit/lower/codegen.hpp"

#include <fmt/format.h>

#include <functional>

#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/raw_ostream.h>

#include <mutex>

#include "jit/analysis/layouts.hpp"
#include "jit/lower/lowering.hpp"
#include "jit/lower/target.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {

int target_warp_size(const std::string& target_name) { return analysis::target_info(target_name).warp_size; }

namespace {
// LLVM reports what it cannot compile (an intrinsic with no lowering, say) through a fatal-error
// handler that would end the process. A JIT inside a training binary must never do that: turn it
// into an exception that names the problem.
[[noreturn]] void throw_llvm_error(void*, const char* reason, bool) {
  throw InternalError(std::string("LLVM could not compile the kernel: ") + reason);
}

void install_llvm_error_handler() {
  static std::once_flag once;
  std::call_once(once, [] { llvm::install_fatal_error_handler(throw_llvm_error, nullptr); });
}
}  // namespace

std::string llvm_version() { return LLVM_VERSION_STRING; }

std::string kernel_symbol(const std::string& name) {
  auto ident = [](unsigned char c, bool first) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
  };
  std::string sym;
  if (!name.empty() && !ident(static_cast<unsigned char>(name[0]), true)) sym += '_';
  for (std::size_t i = 0; i < name.size(); ++i)
    sym += ident(static_cast<unsigned char>(name[i]), false) ? name[i] : '_';
  if (sym.size() > 256) sym = fmt::format("{}_{:016x}", sym.substr(0, 240), std::hash<std::string>{}(name));
  return sym;
}

DeviceBinary compile_to_device(const ir::Module& m, const std::string& target_name, const CodegenOptions& options) {
  install_llvm_error_handler();
  auto target = make_target(target_name);
  llvm::LLVMContext ctx;
  KernelLowering lowering(m, *target, ctx, options);
  std::unique_ptr<llvm::Module> mod = lowering.run();
  std::string ir_text;
  if (options.keep_llvm_ir) {
    llvm::raw_string_ostream os(ir_text);
    mod->print(os, nullptr);
  }
  DeviceBinary bin = target->compile(std::move(mod), kernel_symbol(m.name));
  bin.llvm_ir = std::move(ir_text);
  bin.num_threads = lowering.num_threads();
  bin.shared_bytes = lowering.shared_bytes();
  return bin;
}

}  // namespace tessera::lower

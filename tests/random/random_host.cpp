#include "random_host.hpp"

#include <memory>
#include <vector>

#include "jit/runtime/compile.hpp"
#include "jit/runtime/host_registry.hpp"
#include "jit/lower/codegen.hpp"
#include "jit/transforms/passes.hpp"
#include "tessera/host.hpp"

namespace tessera::random_program {

std::string run_on_host(const Program& p, const std::string& target) {
  const Memory initial(p, data_seed(p));
  const Memory want = run_interpreter(p, *p.module, initial);

  auto m = p.module->clone();
  transforms::run_pass_pipeline(*m, transforms::default_pipeline());
  CompileOptions options;
  options.line_info = true;  // as build_host compiles: a bad access names its line
  lower::DeviceBinary bin = runtime::codegen(*m, target, options);
  // BUG-2 (README.md): so many elements per thread that LLVM takes minutes.
  if (max_slots_per_thread(*m) > 128) return kNotRunPrefix + "more than 128 elements per thread after layouts (BUG-2)";

  host::enable();  // the executor is linked in: register it
  const host::ExecutorHooks& executor = host::registered_executor();
  host::KernelImage image;
  image.kernel = p.module->name;
  image.function = bin.kernel_name;
  image.llvm_ir = std::move(bin.data);
  image.num_threads = bin.num_threads;
  image.warp_size = lower::target_warp_size(target);
  image.shared_bytes = bin.shared_bytes;
  for (const auto& a : m->entry().args) image.arg_names.push_back(a->name_hint);
  const std::unique_ptr<void, void (*)(void*) noexcept> kernel(executor.load(image), executor.release);

  Memory got(initial);
  const std::vector<ArgValue> args = got.arguments(p);
  KernelParams params = kernel_params(p, [&](std::size_t b) { return reinterpret_cast<std::uint64_t>(got.data(b)); });
  executor.launch(kernel.get(), p.grid, args, params.pointers.data());
  return compare_close(p, want, got);
}

}  // namespace tessera::random_program

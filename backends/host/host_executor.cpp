// The host executor's face to libtessera.so (jit/runtime/host_registry.hpp): load, launch and
// release kernels, registered when libtessera_host.so loads and by tessera::host::enable().
#include <memory>
#include <mutex>

#include "backends/host/host_runtime.hpp"
#include "jit/runtime/host_registry.hpp"
#include "tessera/error.hpp"
#include "tessera/host.hpp"

namespace tessera::host {
namespace {

void* load(const KernelImage& image) {
  if (image.num_threads <= 0 || image.warp_size <= 0 || image.num_threads % image.warp_size != 0)
    throw InternalError("tessera: host executor: kernel '" + image.kernel + "' has " + std::to_string(image.num_threads) +
                        " threads for warps of " + std::to_string(image.warp_size));
  auto k = std::make_unique<HostKernel>();
  k->kernel = image.kernel;
  k->target = image.warp_size == 64 ? "host64" : "host";
  k->num_threads = image.num_threads;
  k->warp_size = image.warp_size;
  k->shared_bytes = image.shared_bytes;
  k->arg_names = image.arg_names;
  k->code = jit_compile(image);
  return k.release();
}

void launch(void* kernel, const Dim3& grid, std::span<const ArgValue> args, void* const* params) {
  launch_kernel(*static_cast<HostKernel*>(kernel), grid, args, params);
}

void release(void* kernel) noexcept {
  auto* k = static_cast<HostKernel*>(kernel);
  jit_release(k->code.dylib);
  delete k;
}

void register_once() {
  static std::once_flag once;
  std::call_once(once, [] { register_executor(ExecutorHooks{&load, &launch, &release}); });
}

// Registers when the library loads, so that linking it is enough where the linker keeps it.
const bool registered_at_load = (register_once(), true);

}  // namespace

void enable() { register_once(); }

}  // namespace tessera::host

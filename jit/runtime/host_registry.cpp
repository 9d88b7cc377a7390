#include "jit/runtime/host_registry.hpp"

#include <atomic>

#include "tessera/error.hpp"

namespace tessera::host {
namespace {
// Registered once per process (a static initializer of libtessera_host.so), read on every host
// launch: a pointer to an immutable copy, never freed (a launch may still hold the previous one).
std::atomic<const ExecutorHooks*> g_hooks{nullptr};
}  // namespace

void register_executor(const ExecutorHooks& hooks) {
  if (!hooks.load || !hooks.launch || !hooks.release)
    throw InternalError("tessera: a host executor registered without load, launch and release");
  g_hooks.store(new ExecutorHooks(hooks), std::memory_order_release);
}

const ExecutorHooks& registered_executor() {
  if (const ExecutorHooks* h = g_hooks.load(std::memory_order_acquire)) return *h;
  throw Error(
      "tessera: Executor::Host (TESSERA_EXECUTOR=host or host64) runs kernels through the host executor library, "
      "which this program does not link: link tessera::host (libtessera_host.so; CMake: "
      "target_link_libraries(your_target PRIVATE tessera::host)) and call tessera::host::enable() once");
}

}  // namespace tessera::host

// Building one specialization for an executor: trace, then the disk cache or a compile, then the
// driver load, with a resource report. launch.cpp decides when (its in-memory cache); this file
// decides how.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/cuda_api.hpp"
#include "backends/hip/hip_api.hpp"
#include "jit/ir/ir.hpp"
#include "jit/lower/codegen.hpp"
#include "jit/runtime/disk_cache.hpp"
#include "tessera/launch.hpp"
#include "tessera/runtime.hpp"

namespace tessera::runtime {

// A loaded specialization, ready to launch.
struct Compiled {
  Executor executor;
  std::unique_ptr<ir::Module> module;      // interpreter
  // CUDA: compiled once, loaded on each device on its first launch there (cuda_function).
  std::unique_ptr<std::atomic<cuda::CUfunction>[]> cu_functions;  // by device ordinal
  std::string cu_image, cu_function_name;  // what a further device loads
  std::mutex cu_load_mutex;
  hip::hipFunction_t hip_function = nullptr;
  hip::hipModule_t hip_module = nullptr;
  std::shared_ptr<void> host_kernel;       // host targets: the host executor's handle
  unsigned num_threads = 0, shared_bytes = 0;
  // Debug mode on NVIDIA (lower::Target::checks_bounds_in_kernel): the kernel takes each pointer
  // argument's extent in bytes after the user's arguments; the launch appends them.
  bool takes_extents = false;
  ResourceReport resources;
};

// A disk cache entry holding a device binary as code generation made it (PTX or HSACO), with the
// fields a later load needs (function name, threads) and `tessera-cache list` shows.
CacheEntry device_entry(const std::string& kernel, const std::string& target, lower::DeviceBinary bin);

// The specialization's function on CUDA device `ordinal`, loaded there on first use (with that
// device's primary context current, as the launch path has it).
cuda::CUfunction load_on_device(Compiled& c, int ordinal);
inline cuda::CUfunction cuda_function(Compiled& c, int ordinal) {
  if (cuda::CUfunction f = c.cu_functions[ordinal].load(std::memory_order_acquire)) return f;
  return load_on_device(c, ordinal);
}

// Builds in the calling thread's current context; for CUDA, device `ordinal`'s primary context is
// current and the function is loaded there.
std::unique_ptr<Compiled> build_specialization(const detail::KernelDef& def, Executor ex, const LaunchOptions& opts,
                                               const std::vector<ir::ArgFacts>& facts);

// The GPU in use: "sm_90a" on Hopper (its architecture-specific features need the 'a' target).
std::string cuda_device_arch();
// What CUDA kernels are compiled for: the device's arch, or TESSERA_CUDA_ARCH (sm_80) where set.
std::string cuda_target_name();
// TESSERA_HIP_ARCH, else "gfx942".
std::string hip_target_name();

}  // namespace tessera::runtime

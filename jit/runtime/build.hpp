// Building one specialization for an executor: trace, then the disk cache or a compile, then the
// driver load, with a resource report. launch.cpp decides when (its in-memory cache); this file
// decides how.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_api.hpp"
#include "backends/hip/hip_api.hpp"
#include "jit/ir/ir.hpp"
#include "tessera/launch.hpp"
#include "tessera/runtime.hpp"

namespace tessera::runtime {

// A loaded specialization, ready to launch.
struct Compiled {
  Executor executor;
  std::unique_ptr<ir::Module> module;      // interpreter
  cuda::CUfunction cu_function = nullptr;  // CUDA
  cuda::CUmodule cu_module = nullptr;
  hip::hipFunction_t hip_function = nullptr;
  hip::hipModule_t hip_module = nullptr;
  unsigned num_threads = 0, shared_bytes = 0;
  ResourceReport resources;
};

std::unique_ptr<Compiled> build_specialization(const detail::KernelDef& def, Executor ex, const LaunchOptions& opts,
                                               const std::vector<ir::ArgFacts>& facts);

// "sm_90a" for the GPU in use (Hopper's architecture-specific features need the 'a' target).
std::string cuda_target_name();
// TESSERA_HIP_ARCH, else "gfx942".
std::string hip_target_name();

}  // namespace tessera::runtime

// Runtime queries and compile-only entry points (no launch).
#pragma once
#include <cstddef>
#include <span>
#include <string>

#include "tessera/launch.hpp"

namespace tessera {

// Which executor an Executor::Auto launch uses in this process, and why.
struct ExecutorChoice {
  Executor executor;
  std::string description;   // e.g. "CUDA on NVIDIA H200 (sm_90a)" or "interpreter: no NVIDIA driver (...)"
};
TESSERA_API ExecutorChoice default_executor();

struct RuntimeStats {
  std::size_t compiles = 0;   // specializations compiled (GPU) or traced (interpreter)
  std::size_t launches = 0;
};
TESSERA_API RuntimeStats runtime_stats();

namespace detail {
// What compiling a kernel for a named target produced, without loading or launching it.
struct Artifact {
  std::string format;     // "ptx" or "hsaco"
  std::string assembly;   // PTX or AMDGCN text
  std::string data;       // what the driver loads
  std::string ir;         // the tile IR after layouts
};
TESSERA_API Artifact compile_only(KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args,
                                  const std::string& target);
}  // namespace detail
}  // namespace tessera

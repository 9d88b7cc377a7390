// Constructors of the concrete targets, for make_target (backends/cuda/registry_target.cpp).
// Target is only forward-declared: this header stays free of LLVM headers.
#pragma once
#include <memory>
#include <string>

namespace tessera::lower {
class Target;
}

namespace tessera::backend {

// `arch` is "sm_80" or "sm_90a" (any sm_XX LLVM's NVPTX knows is accepted).
std::unique_ptr<lower::Target> make_nvptx_target(const std::string& arch);
// `arch` is "gfx90a" or "gfx942".
std::unique_ptr<lower::Target> make_amdgpu_target(const std::string& arch);
// `name` is "host" (warps of 32) or "host64" (warps of 64): backends/host/host_target.cpp.
std::unique_ptr<lower::Target> make_host_target(const std::string& name);

}  // namespace tessera::backend

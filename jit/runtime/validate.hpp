#pragma once
#include <array>
#include <cstdint>
#include <span>

#include "tessera/launch.hpp"

namespace tessera::runtime {

// Checks a launch's arguments against the kernel's signature and its options, throwing a
// LaunchError that names the kernel, the argument and what is wrong.
void validate_arguments(const detail::KernelDef& def, std::span<const ArgValue> args);
void validate_num_warps(const detail::KernelDef& def, int num_warps);
// Resolves the grid and checks each dim against 1 and `limits`.
std::array<std::int64_t, 3> resolve_grid(const detail::KernelDef& def, const LaunchOptions& opts,
                                         const std::array<std::int64_t, 3>& limits);

}  // namespace tessera::runtime

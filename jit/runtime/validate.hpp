#pragma once
#include <array>
#include <cstdint>
#include <span>

#include "tessera/launch.hpp"

namespace tessera::runtime {

// Checks a launch's arguments against the kernel's signature and its options, throwing a
// LaunchError that names the kernel, the argument and what is wrong.
void validate_arguments(const detail::KernelDef& def, std::span<const ArgValue> args);
// The executor a launch runs on: the requested one, checked against where its pointer arguments'
// memory is (MemoryPlace), or for Executor::Auto where that memory is (host memory: the
// interpreter, or the host target TESSERA_EXECUTOR names; GPU memory: that GPU), else the
// process default. Arguments in two places are an error, as is an executor that cannot reach them.
Executor launch_executor(const detail::KernelDef& def, Executor requested, std::span<const ArgValue> args);
// The GPU ordinal the pointer arguments say they are on (-1: none says); arguments on two devices
// are an error, as is a `requested` device (LaunchOptions::device, -1: none) other than theirs.
int argument_device(const detail::KernelDef& def, int requested, std::span<const ArgValue> args);
void validate_num_warps(const detail::KernelDef& def, int num_warps);
// Resolves the grid and checks each dim against 1 and `limits`.
std::array<std::int64_t, 3> resolve_grid(const detail::KernelDef& def, const LaunchOptions& opts,
                                         const std::array<std::int64_t, 3>& limits);

}  // namespace tessera::runtime

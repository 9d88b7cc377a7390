// Which CUDA device a launch runs on; the launch path, warmup and the autotuner share it.
#pragma once
#include <span>

#include "backends/cuda/cuda_driver.hpp"
#include "tessera/launch.hpp"

namespace tessera::runtime {

// LaunchOptions::device, else the device of the tensor arguments, else the device of `current`
// (the calling thread's current context), else 0. Arguments on two devices, or on another device
// than LaunchOptions::device, are a LaunchError.
int cuda_launch_device(const detail::KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args,
                       const cuda::CudaDriver& drv, cuda::CUcontext current);

}  // namespace tessera::runtime

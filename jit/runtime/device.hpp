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

// For its scope, the primary context of the device a CUDA launch with these options and arguments
// runs on is current (the caller's context is put back after): what the launch, warmup and the
// autotuner build, load, time and launch under.
class OnLaunchDevice {
 public:
  OnLaunchDevice(const detail::KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args)
      : driver_(cuda::CudaDriver::require()),
        current_(driver_.current_context()),
        device_(cuda_launch_device(def, opts, args, driver_, current_)),
        scope_(driver_, device_, current_) {}
  const cuda::CudaDriver& driver() const { return driver_; }
  int device() const { return device_; }

 private:
  const cuda::CudaDriver& driver_;
  const cuda::CUcontext current_;  // asked once: the launch path's one cuCtxGetCurrent
  const int device_;
  cuda::ScopedContext scope_;
};

}  // namespace tessera::runtime

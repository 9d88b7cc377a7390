// reset_to_zero and restore_value: timing launches a kernel many times, so a kernel that
// accumulates into its output (atomics) or updates an input in place would see its own earlier
// runs. The tuner zeroes the first kind and restores the second before every run.
#include <fmt/format.h>

#include <cstring>

#include "autotune/autotune_internal.hpp"
#include "backends/cuda/cuda_driver.hpp"
#include "backends/hip/hip_driver.hpp"
#include "tessera/buffer.hpp"

namespace tessera::tuning {
namespace {

std::size_t bytes_of(const std::string& kernel, int index, std::span<const ArgValue> args, const AutotuneOptions& o,
                     const char* list) {
  if (index < 0 || static_cast<std::size_t>(index) >= args.size() || args[index].kind != ArgValue::Kind::Pointer)
    throw LaunchError(fmt::format("autotune of kernel '{}': {} names argument {}, which is not a pointer argument",
                                  kernel, list, index));
  if (!o.arg_bytes && !args[index].sized)
    throw LaunchError(fmt::format("autotune of kernel '{}': {} names argument {}, a pointer of unknown size: pass a "
                                  "ts::Buffer, a container or a tensor there, or set AutotuneOptions::arg_bytes",
                                  kernel, list, index));
  return o.arg_bytes ? o.arg_bytes(index, args) : args[index].bytes;
}

}  // namespace

ArgMemory::ArgMemory(const std::string& kernel, Executor ex, void* stream, std::span<const ArgValue> args,
                     const AutotuneOptions& o)
    : ex_(ex), stream_(stream) {
  for (int i : o.reset_to_zero) zero_.push_back({args[i].p, bytes_of(kernel, i, args, o, "reset_to_zero")});
  if (o.restore_value.empty()) return;
  for (int i : o.restore_value) {
    Region r{nullptr, bytes_of(kernel, i, args, o, "restore_value")};
    r.p = args[i].p;
    saved_.emplace_back(r, std::vector<unsigned char>(r.bytes));
  }
  // The inputs may still be being written by work queued on the caller's stream before this call.
  switch (ex) {
    case Executor::Cuda: {
      auto& drv = cuda::CudaDriver::require();
      for (auto& [r, copy] : saved_)
        drv.copy_to_host_async(copy.data(), reinterpret_cast<cuda::CUdeviceptr>(r.p), r.bytes,
                               static_cast<cuda::CUstream>(stream));
      drv.stream_synchronize(static_cast<cuda::CUstream>(stream));
      break;
    }
    default:
      synchronize(ex);
      for (auto& [r, copy] : saved_) detail::memory_to_host(ex, copy.data(), r.p, r.bytes);
      break;
  }
}

void ArgMemory::zero() const {
  for (const auto& r : zero_) {
    switch (ex_) {
      case Executor::Cuda:
        cuda::CudaDriver::require().memset_d8_async(reinterpret_cast<cuda::CUdeviceptr>(r.p), 0, r.bytes,
                                                    static_cast<cuda::CUstream>(stream_));
        break;
      case Executor::Hip: hip::HipDriver::require().memset_d8(r.p, 0, r.bytes); break;
      default: std::memset(r.p, 0, r.bytes); break;
    }
  }
}

void ArgMemory::restore() const {
  for (const auto& [r, copy] : saved_) {
    if (ex_ == Executor::Cuda)
      cuda::CudaDriver::require().copy_to_device_async(reinterpret_cast<cuda::CUdeviceptr>(r.p), copy.data(), r.bytes,
                                                       static_cast<cuda::CUstream>(stream_));
    else
      detail::memory_to_device(ex_, r.p, copy.data(), r.bytes);
  }
}

}  // namespace tessera::tuning

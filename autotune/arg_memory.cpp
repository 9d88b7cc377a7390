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

ArgMemory::ArgMemory(const std::string& kernel, Executor ex, std::span<const ArgValue> args, const AutotuneOptions& o)
    : ex_(ex) {
  for (int i : o.reset_to_zero) zero_.push_back({args[i].p, bytes_of(kernel, i, args, o, "reset_to_zero")});
  if (o.restore_value.empty()) return;
  // The inputs may still be being written by work queued before this call.
  synchronize(ex);
  for (int i : o.restore_value) {
    Region r{nullptr, bytes_of(kernel, i, args, o, "restore_value")};
    r.p = args[i].p;
    std::vector<unsigned char> copy(r.bytes);
    detail::memory_to_host(ex, copy.data(), r.p, r.bytes);
    saved_.emplace_back(r, std::move(copy));
  }
}

void ArgMemory::zero() const {
  for (const auto& r : zero_) {
    switch (ex_) {
      case Executor::Cuda:
        cuda::CudaDriver::require().memset_d8(reinterpret_cast<cuda::CUdeviceptr>(r.p), 0, r.bytes);
        break;
      case Executor::Hip: hip::HipDriver::require().memset_d8(r.p, 0, r.bytes); break;
      default: std::memset(r.p, 0, r.bytes); break;
    }
  }
}

void ArgMemory::restore() const {
  for (const auto& [r, copy] : saved_) detail::memory_to_device(ex_, r.p, copy.data(), r.bytes);
}

}  // namespace tessera::tuning

// Memory of an executor, for tessera::Buffer, and the device queries beside it (synchronize,
// multiprocessor_count, target_name).
#include <cstdlib>
#include <cstring>

#include "backends/cuda/cuda_driver.hpp"
#include "backends/hip/hip_driver.hpp"
#include "jit/runtime/build.hpp"
#include "tessera/buffer.hpp"
#include "tessera/runtime.hpp"

#include <cstdint>

namespace tessera {
namespace detail {

Executor resolve(Executor ex) { return ex == Executor::Auto ? default_executor().executor : ex; }

namespace {
// Runs `f` with CUDA device `device`'s context current (the current one for -1).
template <class F>
decltype(auto) on_cuda_device(int device, F&& f) {
  auto& drv = cuda::CudaDriver::require();
  if (device < 0) return f(drv);
  cuda::ScopedContext on(drv, device);
  return f(drv);
}
}  // namespace

int memory_device(Executor ex, int device) {
  switch (resolve(ex)) {
    case Executor::Cuda: {
      auto& drv = cuda::CudaDriver::require();
      if (device >= 0) {
        drv.context_of(device);  // checks that it exists
        return device;
      }
      return drv.current_device();
    }
    case Executor::Hip: return 0;
    default: return -1;
  }
}

void* memory_alloc(Executor ex, std::size_t bytes, int device) {
  switch (resolve(ex)) {
    case Executor::Cuda:
      return on_cuda_device(device, [&](auto& drv) { return reinterpret_cast<void*>(drv.alloc(bytes)); });
    case Executor::Hip: return hip::HipDriver::require().alloc(bytes);
    default: {
      // 64-byte alignment, like device allocations (which are 256-byte aligned): kernels
      // specialize on 16-byte alignment.
      // A size within 63 bytes of SIZE_MAX would round up to 0: refuse it rather than wrap.
      void* p = bytes <= SIZE_MAX - 63 ? std::aligned_alloc(64, (bytes + 63) / 64 * 64) : nullptr;
      if (!p) throw Error("out of host memory allocating " + std::to_string(bytes) + " bytes");
      return p;
    }
  }
}

void memory_free(Executor ex, void* p, int device) noexcept {
  try {
    switch (resolve(ex)) {
      case Executor::Cuda:
        on_cuda_device(device, [&](auto& drv) { drv.free(reinterpret_cast<cuda::CUdeviceptr>(p)); });
        return;
      case Executor::Hip: hip::HipDriver::require().free(p); return;
      default: std::free(p); return;
    }
  } catch (...) {
    // A failing free at exit (driver already torn down) is not worth terminating for.
  }
}

void memory_to_device(Executor ex, void* dst, const void* src, std::size_t bytes, int device) {
  switch (resolve(ex)) {
    case Executor::Cuda:
      on_cuda_device(device, [&](auto& drv) { drv.copy_to_device(reinterpret_cast<cuda::CUdeviceptr>(dst), src, bytes); });
      return;
    case Executor::Hip: hip::HipDriver::require().copy_to_device(dst, src, bytes); return;
    default: std::memcpy(dst, src, bytes); return;
  }
}

void memory_to_host(Executor ex, void* dst, const void* src, std::size_t bytes, int device) {
  switch (resolve(ex)) {
    case Executor::Cuda:
      on_cuda_device(device, [&](auto& drv) { drv.copy_to_host(dst, reinterpret_cast<cuda::CUdeviceptr>(src), bytes); });
      return;
    case Executor::Hip: hip::HipDriver::require().copy_to_host(dst, src, bytes); return;
    default: std::memcpy(dst, src, bytes); return;
  }
}

}  // namespace detail

int multiprocessor_count(Executor ex) {
  switch (detail::resolve(ex)) {
    case Executor::Cuda: return cuda::CudaDriver::require().device_attribute(cuda::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    case Executor::Hip: return hip::HipDriver::require().multiprocessor_count();
    default: return 1;
  }
}

std::string target_name(Executor ex) {
  switch (detail::resolve(ex)) {
    case Executor::Cuda: return runtime::cuda_target_name();
    case Executor::Hip: return runtime::hip_target_name();
    case Executor::Host: return "host";
    case Executor::Host64: return "host64";
    default: return "interpreter";
  }
}

void synchronize(Executor ex) {
  switch (detail::resolve(ex)) {
    case Executor::Cuda: cuda::CudaDriver::require().context_synchronize(); return;
    case Executor::Hip: hip::HipDriver::require().device_synchronize(); return;
    default: return;
  }
}

}  // namespace tessera

// A typed buffer in the memory of an executor: device memory for CUDA/HIP, host memory for the
// interpreter. Examples and tests use it; a kernel launch accepts it like any tensor type that
// exposes data() and size().
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <span>
#include <utility>
#include <vector>

#include "tessera/launch.hpp"

namespace tessera {
namespace detail {
// `device`: the GPU ordinal (from memory_device); -1 for host memory.
TESSERA_API void* memory_alloc(Executor ex, std::size_t bytes, int device = -1);
TESSERA_API void memory_free(Executor ex, void* p, int device = -1) noexcept;
TESSERA_API void memory_to_device(Executor ex, void* dst, const void* src, std::size_t bytes, int device = -1);
TESSERA_API void memory_to_host(Executor ex, void* dst, const void* src, std::size_t bytes, int device = -1);
// The device a GPU buffer goes on: `device`, or for -1 the calling thread's current device (else
// 0); -1 for an executor of host memory. A LaunchError for a device that does not exist.
TESSERA_API int memory_device(Executor ex, int device);
// Resolves Executor::Auto to the executor a launch would use.
TESSERA_API Executor resolve(Executor ex);
}  // namespace detail

// Waits for all work queued on the executor (no-op for the interpreter).
TESSERA_API void synchronize(Executor ex = Executor::Auto);

template <class T>
class Buffer {
 public:
  Buffer() = default;
  // On `device` (a GPU ordinal; -1: the thread's current device, else 0) for a GPU executor.
  explicit Buffer(std::size_t n, Executor ex = Executor::Auto, int device = -1)
      : ex_(detail::resolve(ex)), device_(detail::memory_device(ex_, device)), n_(n),
        p_(static_cast<T*>(detail::memory_alloc(ex_, bytes_for(n), device_))) {}
  static Buffer from_host(std::span<const T> host, Executor ex = Executor::Auto, int device = -1) {
    Buffer b(host.size(), ex, device);
    b.copy_from(host);
    return b;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept { swap(o); return *this; }
  ~Buffer() { if (p_) detail::memory_free(ex_, p_, device_); }

  T* data() const { return p_; }
  std::size_t size() const { return n_; }
  Executor executor() const { return ex_; }
  // Where the memory is, for the launch's executor check and choice (Executor::Auto follows it).
  MemoryPlace memory_place() const {
    switch (ex_) {
      case Executor::Cuda: return MemoryPlace::Cuda;
      case Executor::Hip: return MemoryPlace::Hip;
      default: return MemoryPlace::Host;
    }
  }
  int device() const { return device_; }  // the GPU ordinal; -1 for host memory
  void copy_from(std::span<const T> host) {
    if (host.size() != n_) throw Error("Buffer::copy_from: size mismatch");
    detail::memory_to_device(ex_, p_, host.data(), n_ * sizeof(T), device_);
  }
  std::vector<T> to_host() const {
    std::vector<T> out(n_);
    detail::memory_to_host(ex_, out.data(), p_, n_ * sizeof(T), device_);
    return out;
  }

 private:
  // At least one element's worth (a zero-length buffer still has a distinct, aligned address);
  // a count whose byte size overflows is refused instead of wrapping into a small allocation.
  static std::size_t bytes_for(std::size_t n) {
    if (n > SIZE_MAX / sizeof(T))
      throw Error("ts::Buffer of " + std::to_string(n) + " elements of " + std::to_string(sizeof(T)) +
                  " bytes: the size does not fit in memory");
    return std::max<std::size_t>(n, 1) * sizeof(T);
  }
  void swap(Buffer& o) noexcept {
    std::swap(ex_, o.ex_);
    std::swap(device_, o.device_);
    std::swap(n_, o.n_);
    std::swap(p_, o.p_);
  }
  Executor ex_ = Executor::Interpreter;
  int device_ = -1;
  std::size_t n_ = 0;
  T* p_ = nullptr;
};

}  // namespace tessera

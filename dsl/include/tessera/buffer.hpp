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
TESSERA_API void* memory_alloc(Executor ex, std::size_t bytes);
TESSERA_API void memory_free(Executor ex, void* p) noexcept;
TESSERA_API void memory_to_device(Executor ex, void* dst, const void* src, std::size_t bytes);
TESSERA_API void memory_to_host(Executor ex, void* dst, const void* src, std::size_t bytes);
// Resolves Executor::Auto to the executor a launch would use.
TESSERA_API Executor resolve(Executor ex);
}  // namespace detail

// Waits for all work queued on the executor (no-op for the interpreter).
TESSERA_API void synchronize(Executor ex = Executor::Auto);

template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t n, Executor ex = Executor::Auto)
      : ex_(detail::resolve(ex)), n_(n), p_(static_cast<T*>(detail::memory_alloc(ex_, bytes_for(n)))) {}
  static Buffer from_host(std::span<const T> host, Executor ex = Executor::Auto) {
    Buffer b(host.size(), ex);
    b.copy_from(host);
    return b;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept { swap(o); }
  Buffer& operator=(Buffer&& o) noexcept { swap(o); return *this; }
  ~Buffer() { if (p_) detail::memory_free(ex_, p_); }

  T* data() const { return p_; }
  std::size_t size() const { return n_; }
  Executor executor() const { return ex_; }
  void copy_from(std::span<const T> host) {
    if (host.size() != n_) throw Error("Buffer::copy_from: size mismatch");
    detail::memory_to_device(ex_, p_, host.data(), n_ * sizeof(T));
  }
  std::vector<T> to_host() const {
    std::vector<T> out(n_);
    detail::memory_to_host(ex_, out.data(), p_, n_ * sizeof(T));
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
  void swap(Buffer& o) noexcept { std::swap(ex_, o.ex_); std::swap(n_, o.n_); std::swap(p_, o.p_); }
  Executor ex_ = Executor::Interpreter;
  std::size_t n_ = 0;
  T* p_ = nullptr;
};

}  // namespace tessera

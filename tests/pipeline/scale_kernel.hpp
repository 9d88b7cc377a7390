// out = x * tag, with a tag unique to each call of unique_tag(): a kernel whose traced IR no
// earlier test run has put in a disk cache. Shared by the CPU and GPU runtime tests.
#pragma once
#include <tessera/tessera.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>

namespace runtime_test {
namespace ts = tessera;

inline auto make_scale(float tag, const char* name) {
  return ts::kernel(name, [tag](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    ts::store(out + offs, ts::load(x + offs, mask) * tag, mask);
  });
}

inline float unique_tag() {
  static std::atomic<int> counter{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return static_cast<float>((now % 1000003) + 1000003 * ++counter) * 1e-3f + static_cast<float>(::getpid() % 997);
}

}  // namespace runtime_test

// out = x * TAG, where the meta-parameter TAG differs at each call of unique_tag(): a kernel
// whose traced IR no earlier test run has put in a disk cache. The tag is a meta-parameter (see
// scale_meta), not a capture: a kernel function captures nothing. Shared by the CPU and GPU
// runtime tests.
#pragma once
#include <tessera/tessera.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace runtime_test {
namespace ts = tessera;

inline auto make_scale(const char* name) {
  return ts::kernel(name, [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    const float tag = static_cast<float>(ts::meta("TAG"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    ts::store(out + offs, ts::load(x + offs, mask) * tag, mask);
  });
}

// The meta-parameters of a make_scale launch: BLOCK and the tag.
inline ts::MetaValues scale_meta(float tag, std::int64_t block) {
  return {{"BLOCK", block}, {"TAG", static_cast<std::int64_t>(tag)}};
}

// A whole number in [1, 2^24), so exact as a float and as the int64 meta-parameter TAG.
inline float unique_tag() {
  static std::atomic<std::int64_t> counter{0};
  const std::int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  const std::int64_t mixed = now % 1000003 + 1000003 * ++counter + 7919 * (::getpid() % 997);
  return static_cast<float>(1 + mixed % ((std::int64_t{1} << 24) - 1));
}

}  // namespace runtime_test

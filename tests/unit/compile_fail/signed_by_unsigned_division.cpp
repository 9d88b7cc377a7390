// expect-error: / and % of a signed and an unsigned integer tile are refused
// Must not compile: an i32 tile divided by a u32 tile (Triton raises the same TypeError).
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

#include <cstdint>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<std::int32_t> p, ts::Ptr<std::uint32_t> q) {
  auto offs = ts::arange(0, 16);
  ts::store(p + offs, ts::load(p + offs) / ts::load(q + offs));
});

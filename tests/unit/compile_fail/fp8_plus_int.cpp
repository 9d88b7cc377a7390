// expect-error: does not combine with an integer .as Triton.s TypeError
// Must not compile: an fp8 tile plus an i32 tile (Triton raises a TypeError: no type holds both).
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

#include <cstdint>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<ts::float8_e4m3> p, ts::Ptr<std::int32_t> q) {
  auto offs = ts::arange(0, 16);
  ts::store(p + offs, ts::load(p + offs) + ts::load(q + offs));
});

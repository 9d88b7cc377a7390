// expect-error: tessera::dot takes half, bfloat16, float, int8_t, float8_e4m3 or float8_e5m2 tiles
// Must not compile: dot of int32 tiles (no tensor-core or accumulator rule for them).
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<std::int32_t> p) {
  auto offs = ts::arange(0, 16).col() * 16 + ts::arange(0, 16).row();
  auto a = ts::load(p + offs);
  ts::store(p + offs, ts::dot(a, a).to<std::int32_t>());
});

// expect-error: need integer or mask operands, not floats
// Must not compile: & on a float tile.
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> p) {
  auto offs = ts::arange(0, 16);
  ts::store(p + offs, ts::load(p + offs) & 1);
});

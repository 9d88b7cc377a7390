// expect-error: tessera::where: the condition must be a mask
// Must not compile: an integer tile as the condition of where.
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> p) {
  auto offs = ts::arange(0, 16);
  ts::store(p + offs, ts::where(offs, 1.0f, 2.0f));
});

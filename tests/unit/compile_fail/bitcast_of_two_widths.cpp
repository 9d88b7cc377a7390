// expect-error: the two element types must have the same width
// Must not compile: a bitcast between types of different widths.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> a) {
  auto x = ts::load(a + ts::arange(0, 16));
  auto y = ts::bitcast<double>(x);
  (void)y;
});

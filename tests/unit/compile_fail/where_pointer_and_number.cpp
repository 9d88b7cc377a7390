// expect-error: a pointer and a number do not mix
// Must not compile: where between a pointer tile and a number.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> a) {
  auto offs = ts::arange(0, 16);
  auto p = ts::where(offs < 8, a + offs, 0);
  (void)p;
});

// expect-error: both must be pointers to the same element type
// Must not compile: where between a float pointer and a half pointer (no element type to pick).
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> a, ts::Ptr<ts::half> b) {
  auto offs = ts::arange(0, 16);
  auto p = ts::where(offs < 8, a + offs, b + offs);
  (void)p;
});

// expect-error: tessera::device_assert needs a boolean condition
// Must not compile: a float tile given to device_assert as its condition (Triton would test it
// against zero; tessera asks for the comparison).
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> p) {
  auto x = ts::load(p);
  ts::device_assert(x, "x is not zero");
  ts::store(p, x);
});

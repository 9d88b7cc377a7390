// expect-error: a mask has no bit width to reinterpret
// Must not compile: a bitcast of a mask.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> a) {
  auto m = ts::load(a + ts::arange(0, 16)) > 0.0f;
  auto y = ts::bitcast<std::int8_t>(m);
  (void)y;
});

// expect-error: tessera::clamp needs a float tile
// Must not compile: clamp of an int tile (Triton's clamp takes floats only).
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<std::int32_t> p) {
  auto x = ts::load(p + ts::arange(0, 16));
  ts::store(p + ts::arange(0, 16), ts::clamp(x, 0, 10));
});

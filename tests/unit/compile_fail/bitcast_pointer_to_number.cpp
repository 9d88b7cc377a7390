// expect-error: a pointer bitcasts only to another pointer
// Must not compile: a bitcast of a pointer tile to a number.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> a) {
  auto y = ts::bitcast<std::int64_t>(a + ts::arange(0, 16));
  (void)y;
});

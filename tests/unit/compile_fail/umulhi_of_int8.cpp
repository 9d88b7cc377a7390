// expect-error: umulhi: the operands must be 32- or 64-bit integers
// Must not compile: umulhi of int8 tiles (Triton's takes 32- and 64-bit integers).
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<std::int8_t> p) {
  auto x = ts::load(p + ts::arange(0, 16));
  ts::store(p + ts::arange(0, 16), ts::umulhi(x, x));
});

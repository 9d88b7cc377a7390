// expect-error: propagate_nan applies to float operands only
// Must not compile: maximum of int tiles with a NaN rule (integers have no NaN).
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<std::int32_t> p) {
  auto x = ts::load(p + ts::arange(0, 16));
  ts::store(p + ts::arange(0, 16), ts::maximum(x, 3, ts::PropagateNan::all));
});

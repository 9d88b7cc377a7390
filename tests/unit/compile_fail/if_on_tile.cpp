// expect-error: a tile has no C.. truth value while the kernel is traced
// Must not compile: if (tile): a C++ if on a traced value.
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> p, ts::Int n) {
  if (ts::program_id(0) < n) ts::store(p, 1.0f);
});

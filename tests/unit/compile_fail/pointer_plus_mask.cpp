// expect-error: a mask is not a pointer offset
// Must not compile: pointer + mask.
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> p) { ts::store(p + (ts::arange(0, 16) < 8), 1.0f); });

// expect-error: a pointer offset must be an integer, not a float
// Must not compile: pointer + C++ float.
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> p) { ts::store(p + 1.5f, 1.0f); });

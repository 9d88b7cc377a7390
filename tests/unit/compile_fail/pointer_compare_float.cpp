// expect-error: pointers cannot be compared
// Must not compile: pointer < float.
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> p) { ts::store(p, 1.0f, p < 1.5f); });

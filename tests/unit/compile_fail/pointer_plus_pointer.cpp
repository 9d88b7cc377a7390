// expect-error: two pointers cannot be added or subtracted
// Must not compile: pointer + pointer.
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> p, ts::Ptr<float> q) { ts::store(p + q, 1.0f); });

// expect-error: a pointer takes only . and - with an integer offset
// Must not compile: pointer * int tile.
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> p, ts::Int n) { ts::store(p * n, 1.0f); });

// expect-error: has no meaning; subtract the offset from the pointer
// Must not compile: offset - pointer.
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> p) { ts::store(ts::arange(0, 16) - p, 1.0f); });

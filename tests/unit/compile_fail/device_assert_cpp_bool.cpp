// expect-error: tessera::device_assert checks a condition of the kernel
// Must not compile: a C++ bool given to device_assert (it is known at trace time).
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> p) {
  int block = 128;
  ts::device_assert(block % 32 == 0, "block is a multiple of 32");
  ts::store(p, ts::load(p));
});

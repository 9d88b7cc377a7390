// expect-error: tessera::device_print prints tiles, scalars and pointers of the kernel
// Must not compile: a C++ number given to device_print (it is known at trace time).
// A ctest entry compiles this file and passes when the compiler's output carries the message
// above (tessera's static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

namespace ts = tessera;

auto k = ts::kernel("k", [](ts::Ptr<float> p) {
  int block = 128;
  ts::device_print("block", block);
  ts::store(p, ts::load(p));
});

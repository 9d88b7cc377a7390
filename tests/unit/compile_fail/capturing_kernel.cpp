// expect-error: the kernel function must not capture anything
// Must not compile: a kernel function that captures a variable. A ctest entry compiles this file
// and passes when the compiler's output carries the message above (tessera::kernel's
// static_assert), the pattern of the first line.
#include <tessera/tessera.hpp>

namespace ts = tessera;

int main() {
  float scale = 2.0f;
  auto k = ts::kernel("scale", [&](ts::Ptr<float> x) { ts::store(x, ts::load(x) * scale); });
  scale = 3.0f;  // a launch after this would still multiply by 2: hence the refusal
  (void)k;
}

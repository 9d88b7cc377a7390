// Scales a vector with a tessera kernel; exits non-zero on a wrong result.
#include <tessera/tessera.hpp>

#include <cstdio>
#include <vector>

namespace ts = tessera;

int main() {
  auto scale = ts::kernel("scale", [](ts::Ptr<float> x, ts::Float a, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    ts::store(x + offs, ts::load(x + offs, offs < n) * a, offs < n);
  });
  const int n = 3000;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = static_cast<float>(i);
  auto x = ts::Buffer<float>::from_host(h);
  scale[{.grid = {ts::cdiv(n, 512)}, .meta = {{"BLOCK", 512}}}](x, 2.0f, n);
  ts::synchronize();
  auto r = x.to_host();
  for (int i = 0; i < n; ++i)
    if (r[i] != 2.0f * static_cast<float>(i)) { std::printf("consumer: wrong at %d\n", i); return 1; }
  std::printf("consumer: OK on %s\n", ts::default_executor().description.c_str());
  return 0;
}

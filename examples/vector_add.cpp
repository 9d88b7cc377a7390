// The demo: vector add, written as in Triton's tutorial. Runs on the GPU when one is present,
// else on the interpreter, says which, and checks its own result.
#include <tessera/tessera.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace ts = tessera;

int main(int argc, char** argv) {
  const std::int32_t n = argc > 1 ? std::atoi(argv[1]) : 98432;

  auto add = ts::kernel("add", [](ts::Ptr<float> x, ts::Ptr<float> y, ts::Ptr<float> out, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));  // a plain C++ int while tracing
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    ts::store(out + offs, ts::load(x + offs, mask) + ts::load(y + offs, mask), mask);
  });

  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> hx(n), hy(n);
  for (auto& v : hx) v = dist(rng);
  for (auto& v : hy) v = dist(rng);

  try {
    auto where = ts::default_executor();
    std::printf("tessera vector add, n = %d, running on: %s\n", n, where.description.c_str());
    auto x = ts::Buffer<float>::from_host(hx), y = ts::Buffer<float>::from_host(hy);
    ts::Buffer<float> out(n);
    add[{.grid = {ts::cdiv(n, 1024)}, .meta = {{"BLOCK", 1024}}, .num_warps = 4}](x, y, out, n);
    ts::synchronize();
    auto result = out.to_host();
    for (std::int32_t i = 0; i < n; ++i) {
      if (result[i] != hx[i] + hy[i]) {
        std::printf("FAILED at %d: %g != %g\n", i, result[i], hx[i] + hy[i]);
        return 1;
      }
    }
    std::printf("OK: %d elements match the host reference\n", n);
    return 0;
  } catch (const ts::Error& e) {
    std::printf("tessera error: %s\n", e.what());
    return 1;
  }
}

// A fused elementwise chain over f16 data: out = f16(elu(f32(x) * scale + bias)), one pass over
// memory instead of four (the kernel is in kernels.hpp). Checks itself against a host reference.
#include <tessera/tessera.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;

int main(int argc, char** argv) {
  const std::int32_t n = argc > 1 ? std::atoi(argv[1]) : 100003;
  const float scale = 1.5f, bias = -0.25f;

  auto elu = ex::make_fused_elu();

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  std::vector<ts::half> hx(n);
  for (auto& v : hx) v = ts::half(dist(rng));

  try {
    std::printf("tessera fused ELU (f16), n = %d, running on: %s\n", n, ts::default_executor().description.c_str());
    auto x = ts::Buffer<ts::half>::from_host(hx);
    ts::Buffer<ts::half> out(n);
    elu[ex::fused_elu_options(n)](x, out, scale, bias, n);
    ts::synchronize();
    auto result = out.to_host();
    std::vector<float> ref(n);
    ex::fused_elu_reference(hx, ref, scale, bias);
    double worst = 0;
    for (std::int32_t i = 0; i < n; ++i) {
      double err = std::abs(static_cast<float>(result[i]) - ref[i]) / std::max(1.0f, std::abs(ref[i]));
      worst = std::max(worst, err);
    }
    std::printf("%s: worst relative error %.3g (bound 1e-2 for f16)\n", worst <= 1e-2 ? "OK" : "FAILED", worst);
    return worst <= 1e-2 ? 0 : 1;
  } catch (const ts::Error& e) {
    std::printf("tessera error: %s\n", e.what());
    return 1;
  }
}

// A fused elementwise chain over f16 data: out = f16(elu(f32(x) * scale + bias)), one pass over
// memory instead of four. Checks itself against a host reference.
#include <tessera/tessera.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace ts = tessera;

int main(int argc, char** argv) {
  const std::int32_t n = argc > 1 ? std::atoi(argv[1]) : 100003;
  const float scale = 1.5f, bias = -0.25f;

  auto elu = ts::kernel("fused_elu", [](ts::Ptr<ts::half> x, ts::Ptr<ts::half> out, ts::Float scale, ts::Float bias,
                                        ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto v = ts::load(x + offs, mask).to<float>() * scale + bias;
    auto y = ts::where(v > 0.0f, v, ts::exp(v) - 1.0f);
    ts::store(out + offs, y.to<ts::half>(), mask);
  });

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-3.f, 3.f);
  std::vector<ts::half> hx(n);
  for (auto& v : hx) v = ts::half(dist(rng));

  try {
    std::printf("tessera fused ELU (f16), n = %d, running on: %s\n", n, ts::default_executor().description.c_str());
    auto x = ts::Buffer<ts::half>::from_host(hx);
    ts::Buffer<ts::half> out(n);
    elu[{.grid = {ts::cdiv(n, 2048)}, .meta = {{"BLOCK", 2048}}, .num_warps = 8}](x, out, scale, bias, n);
    ts::synchronize();
    auto result = out.to_host();
    double worst = 0;
    for (std::int32_t i = 0; i < n; ++i) {
      float v = static_cast<float>(hx[i]) * scale + bias;
      float ref = v > 0 ? v : std::expm1(v);
      double err = std::abs(static_cast<float>(result[i]) - ref) / std::max(1.0f, std::abs(ref));
      worst = std::max(worst, err);
    }
    std::printf("%s: worst relative error %.3g (bound 1e-2 for f16)\n", worst <= 1e-2 ? "OK" : "FAILED", worst);
    return worst <= 1e-2 ? 0 : 1;
  } catch (const ts::Error& e) {
    std::printf("tessera error: %s\n", e.what());
    return 1;
  }
}

// Layer norm and RMSNorm forward over f16 rows (Triton's tutorial 05): checks both against host
// references.
#include <cstdio>
#include <random>
#include <vector>

#include "norm_kernels.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;

int main(int argc, char** argv) {
  const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : 777, cols = argc > 2 ? std::atoll(argv[2]) : 1000;
  const float eps = 1e-5f;
  std::mt19937 rng(9);
  std::normal_distribution<float> dist(0.5f, 2.f);
  std::vector<ts::half> hx(static_cast<std::size_t>(rows * cols)), hw(cols), hb(cols);
  for (auto& v : hx) v = ts::half(dist(rng));
  for (auto& v : hw) v = ts::half(dist(rng));
  for (auto& v : hb) v = ts::half(dist(rng));
  try {
    std::printf("tessera layer norm / RMSNorm %lld x %lld (f16), running on: %s\n", static_cast<long long>(rows),
                static_cast<long long>(cols), ts::default_executor().description.c_str());
    auto x = ts::Buffer<ts::half>::from_host(hx), w = ts::Buffer<ts::half>::from_host(hw), b = ts::Buffer<ts::half>::from_host(hb);
    ts::Buffer<ts::half> y(hx.size());
    ts::Buffer<float> mean(rows), rstd(rows);
    const auto opts = ex::layer_norm_options(rows, cols);
    const auto stride = static_cast<std::int32_t>(cols), n = static_cast<std::int32_t>(cols);
    ex::make_layer_norm_fwd()[opts](x, y, w, b, mean, rstd, stride, n, eps);
    ts::synchronize();
    std::vector<float> ref(hx.size());
    ex::layer_norm_reference(hx, hw, hb, ref, rows, cols, eps);
    auto check = [&](const char* what, const std::vector<ts::half>& got) {
      double num = 0, den = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        double d = static_cast<float>(got[i]) - ref[i];
        num += d * d;
        den += static_cast<double>(ref[i]) * ref[i];
      }
      const double rel = std::sqrt(num / den);
      std::printf("%s %s: relative error %.3g (bound 1e-2)\n", rel <= 1e-2 ? "OK" : "FAILED", what, rel);
      return rel <= 1e-2;
    };
    bool ok = check("layer norm", y.to_host());
    ex::make_rms_norm_fwd()[opts](x, y, w, rstd, stride, n, eps);
    ts::synchronize();
    ex::rms_norm_reference(hx, hw, ref, rows, cols, eps);
    ok = check("RMSNorm", y.to_host()) && ok;
    return ok ? 0 : 1;
  } catch (const ts::Error& e) {
    std::printf("tessera error: %s\n", e.what());
    return 1;
  }
}

// Fused softmax over the rows of a matrix (Triton's tutorial 02), masked for any row length up to
// 32768. Checks itself against a host reference and prints a throughput.
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "norm_kernels.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;

int main(int argc, char** argv) {
  const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : 1823, cols = argc > 2 ? std::atoll(argv[2]) : 781;
  auto softmax = ex::make_softmax();
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.f, 3.f);
  std::vector<float> hx(static_cast<std::size_t>(rows * cols)), ref(hx.size());
  for (auto& v : hx) v = dist(rng);
  try {
    std::printf("tessera softmax %lld x %lld, running on: %s\n", static_cast<long long>(rows), static_cast<long long>(cols),
                ts::default_executor().description.c_str());
    auto x = ts::Buffer<float>::from_host(hx);
    auto out = ts::Buffer<float>::from_host(std::vector<float>(hx.size(), -1.0f));
    auto t0 = std::chrono::steady_clock::now();
    softmax[ex::softmax_options(rows, cols)](x, out, static_cast<std::int32_t>(cols), static_cast<std::int32_t>(cols));
    ts::synchronize();
    auto t1 = std::chrono::steady_clock::now();
    auto r = out.to_host();
    ex::softmax_reference(hx, ref, rows, cols);
    double worst = 0;
    for (std::size_t i = 0; i < r.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(r[i]) - ref[i]) / std::max(1e-30, static_cast<double>(std::abs(ref[i])) + 1e-6));
    const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    std::printf("%s: worst relative error %.3g; first call (compile included) %.1f ms, %.2f GB/s\n",
                worst <= 1e-4 ? "OK" : "FAILED", worst, ms, 2.0 * 4 * static_cast<double>(hx.size()) / (ms * 1e6));
    return worst <= 1e-4 ? 0 : 1;
  } catch (const ts::Error& e) {
    std::printf("tessera error: %s\n", e.what());
    return 1;
  }
}

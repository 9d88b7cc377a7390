// The matmul variants of examples/matmul_kernels.hpp beside plain matmul: bf16 matmul with a fused
// bias + GELU epilogue cast to bf16, and a batched f16 matmul (one grid axis per batch). Each
// checks itself against a double-precision host reference.
//   matmul_fused [M N K BATCHES]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <tuple>
#include <vector>

#include "matmul_kernels.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;

namespace {

template <class T>
std::vector<T> random_tile(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<T> v(n);
  for (auto& x : v) x = T(dist(rng));
  return v;
}

bool bias_gelu(std::int64_t m, std::int64_t n, std::int64_t k) {
  std::mt19937 rng(3);
  const auto ha = random_tile<ts::bfloat16>(static_cast<std::size_t>(m * k), rng);
  const auto hb = random_tile<ts::bfloat16>(static_cast<std::size_t>(k * n), rng);
  const auto hbias = random_tile<float>(static_cast<std::size_t>(n), rng);
  auto a = ts::Buffer<ts::bfloat16>::from_host(ha), b = ts::Buffer<ts::bfloat16>::from_host(hb);
  auto bias = ts::Buffer<float>::from_host(hbias);
  auto c = ts::Buffer<ts::bfloat16>::from_host(std::vector<ts::bfloat16>(static_cast<std::size_t>(m * n), ts::bfloat16(-7.f)));
  auto kernel = ex::make_matmul_bias_gelu<ts::bfloat16>();
  const ex::MatmulShape s{m, n, k, k, 1, n, 1, n, 1};
  const ex::MatmulConfig cfg{.block_m = 64, .block_n = 64, .block_k = 32, .group_m = 4, .num_warps = 4};
  std::apply([&](auto... sc) { kernel[ex::matmul_options(s, cfg)](a, b, bias, c, sc...); }, ex::matmul_scalars(s));
  ts::synchronize();
  const auto got = c.to_host();
  const auto prod = ex::matmul_reference<ts::bfloat16>(ha, hb, s);
  std::int64_t bad = 0;
  double worst = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const double x = prod[i * n + j] + hbias[j];
      const double want = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
      const double err = std::abs(static_cast<float>(got[i * n + j]) - want);
      worst = std::max(worst, err);
      bad += !(err <= 8e-3 * (1 + std::abs(want)));  // bf16 keeps 8 bits: 2^-8 relative
    }
  std::printf("%s bf16 matmul + bias + GELU %lld x %lld x %lld: worst abs error %.3g, %lld elements off\n",
              bad ? "FAILED" : "OK", static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), worst,
              static_cast<long long>(bad));
  return bad == 0;
}

bool batched(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batches) {
  std::mt19937 rng(5);
  const auto ha = random_tile<ts::half>(static_cast<std::size_t>(batches * m * k), rng);
  const auto hb = random_tile<ts::half>(static_cast<std::size_t>(batches * k * n), rng);
  auto a = ts::Buffer<ts::half>::from_host(ha), b = ts::Buffer<ts::half>::from_host(hb);
  auto c = ts::Buffer<float>::from_host(std::vector<float>(static_cast<std::size_t>(batches * m * n), -7.f));
  auto kernel = ex::make_batched_matmul<ts::half, float>();
  const std::int64_t bm = 64, bn = 32;
  const ts::LaunchOptions opts{.grid = {((m + bm - 1) / bm) * ((n + bn - 1) / bn), batches},
                               .meta = {{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", 32}},
                               .num_warps = 4,
                               .num_stages = 2};
  auto i = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  kernel[opts](a, b, c, i(m), i(n), i(k), i(m * k), i(k * n), i(m * n));
  ts::synchronize();
  const auto got = c.to_host();
  std::int64_t bad = 0;
  for (std::int64_t z = 0; z < batches; ++z) {
    const ex::MatmulShape s{m, n, k, k, 1, n, 1, n, 1};
    const auto want = ex::matmul_reference<ts::half>(std::span(ha).subspan(static_cast<std::size_t>(z * m * k)),
                                                     std::span(hb).subspan(static_cast<std::size_t>(z * k * n)), s);
    for (std::int64_t e = 0; e < m * n; ++e)
      bad += !(std::abs(got[static_cast<std::size_t>(z * m * n + e)] - want[static_cast<std::size_t>(e)]) <= 1e-6 * k * k + 1e-5);
  }
  std::printf("%s batched f16 matmul %lld x (%lld x %lld x %lld): %lld elements off\n", bad ? "FAILED" : "OK",
              static_cast<long long>(batches), static_cast<long long>(m), static_cast<long long>(n),
              static_cast<long long>(k), static_cast<long long>(bad));
  return bad == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t m = argc > 1 ? std::atoll(argv[1]) : 150, n = argc > 2 ? std::atoll(argv[2]) : 100,
                     k = argc > 3 ? std::atoll(argv[3]) : 72, batches = argc > 4 ? std::atoll(argv[4]) : 3;
  try {
    std::printf("tessera fused matmuls, running on: %s\n", ts::default_executor().description.c_str());
    bool ok = bias_gelu(m, n, k);
    ok &= batched(m, n, k, batches);
    return ok ? 0 : 1;
  } catch (const ts::Error& e) {
    std::printf("tessera error: %s\n", e.what());
    return 1;
  }
}

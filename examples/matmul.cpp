// Matrix multiplication (Triton's tutorial 03) in f16, bf16 and f32 with f32 accumulation, on
// shapes that are not multiples of the blocks, with A row-major and B column-major (transposed
// through its strides). Checks itself against a double-precision host reference.
//   matmul [M N K]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <tuple>
#include <vector>

#include "matmul_kernels.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;

template <class In>
bool run(const char* what, std::int64_t m, std::int64_t n, std::int64_t k, bool b_transposed) {
  ex::MatmulShape s{m, n, k, k, 1, 0, 0, n, 1};
  if (b_transposed) s.stride_bk = 1, s.stride_bn = k;  // B stored as N x K
  else s.stride_bk = n, s.stride_bn = 1;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<In> ha(static_cast<std::size_t>(m * k)), hb(static_cast<std::size_t>(k * n));
  for (auto& v : ha) v = In(dist(rng));
  for (auto& v : hb) v = In(dist(rng));
  auto a = ts::Buffer<In>::from_host(ha);
  auto b = ts::Buffer<In>::from_host(hb);
  auto c = ts::Buffer<float>::from_host(std::vector<float>(static_cast<std::size_t>(m * n), -7.f));
  auto matmul = ex::make_matmul<In, float>();
  ex::MatmulConfig cfg{.block_m = 64, .block_n = 64, .block_k = 32, .group_m = 4, .num_warps = 4};
  std::apply([&](auto... sc) { matmul[ex::matmul_options(s, cfg)](a, b, c, sc...); }, ex::matmul_scalars(s));
  ts::synchronize();
  const auto got = c.to_host();
  const auto want = ex::matmul_reference<In>(ha, hb, s);
  // Each product of two inputs is exact in f32 (f16, bf16) or rounded once (f32); the f32 sums
  // of K terms of size <= 1 differ from the double reference by at most about K * 2^-24 * K.
  const double bound = 1e-6 * static_cast<double>(k * k) + 1e-5;
  std::int64_t bad = 0, first = -1;
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(got[i] - want[i]);
    worst = std::max(worst, err);
    if (!(err <= bound)) bad += 1, first = first < 0 ? static_cast<std::int64_t>(i) : first;
  }
  std::printf("%s %s %lld x %lld x %lld (B %s): worst abs error %.3g (bound %.3g), %lld elements off (first %lld)\n",
              bad ? "FAILED" : "OK", what, static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
              b_transposed ? "column-major" : "row-major", worst, bound, static_cast<long long>(bad),
              static_cast<long long>(first));
  return bad == 0;
}

int main(int argc, char** argv) {
  const std::int64_t m = argc > 1 ? std::atoll(argv[1]) : 200, n = argc > 2 ? std::atoll(argv[2]) : 136,
                     k = argc > 3 ? std::atoll(argv[3]) : 100;
  try {
    std::printf("tessera matmul, running on: %s\n", ts::default_executor().description.c_str());
    bool ok = run<ts::half>("f16", m, n, k, false);
    ok &= run<ts::bfloat16>("bf16", m, n, k, true);
    ok &= run<float>("f32", m, n, k, false);
    return ok ? 0 : 1;
  } catch (const ts::Error& e) {
    std::printf("tessera error: %s\n", e.what());
    return 1;
  }
}

// 2-D tiles with broadcasting: out[i, j] = x[i, j] * row_scale[i] + col_bias[j] over an M x N
// row-major matrix with a row stride, masked on both dims (M and N need not be multiples of the
// block). x[:, None] in Triton is .col() here, x[None, :] is .row(). The kernel is in kernels.hpp.
#include <tessera/tessera.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;

int main(int argc, char** argv) {
  const std::int32_t m = argc > 1 ? std::atoi(argv[1]) : 1000, n = argc > 2 ? std::atoi(argv[2]) : 300;
  const std::int32_t stride = n + 3;

  auto affine = ex::make_broadcast_2d();

  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> hx(static_cast<std::size_t>(m) * stride), hs(m), hb(n);
  for (auto& v : hx) v = dist(rng);
  for (auto& v : hs) v = dist(rng);
  for (auto& v : hb) v = dist(rng);

  try {
    std::printf("tessera 2-D broadcast, %d x %d, running on: %s\n", m, n, ts::default_executor().description.c_str());
    auto x = ts::Buffer<float>::from_host(hx), s = ts::Buffer<float>::from_host(hs), b = ts::Buffer<float>::from_host(hb);
    auto out = ts::Buffer<float>::from_host(std::vector<float>(hx.size(), -7.0f));
    affine[ex::broadcast_2d_options(m, n)](x, s, b, out, m, n, stride);
    ts::synchronize();
    auto r = out.to_host();
    std::vector<float> ref(hx.size(), -7.0f);  // padding untouched
    ex::broadcast_2d_reference(hx, hs, hb, ref, m, n, stride);
    for (std::int32_t i = 0; i < m; ++i)
      for (std::int32_t j = 0; j < stride; ++j) {
        const float want = ref[i * stride + j];
        if (std::abs(r[i * stride + j] - want) > 1e-6f * std::max(1.0f, std::abs(want))) {
          std::printf("FAILED at (%d, %d): %g != %g\n", i, j, r[i * stride + j], want);
          return 1;
        }
      }
    std::printf("OK: %d x %d elements match, padding untouched\n", m, n);
    return 0;
  } catch (const ts::Error& e) {
    std::printf("tessera error: %s\n", e.what());
    return 1;
  }
}

// 2-D tiles with broadcasting: out[i, j] = x[i, j] * row_scale[i] + col_bias[j] over an M x N
// row-major matrix with a row stride, masked on both dims (M and N need not be multiples of the
// block). x[:, None] in Triton is .col() here, x[None, :] is .row().
#include <tessera/tessera.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace ts = tessera;

int main(int argc, char** argv) {
  const std::int32_t m = argc > 1 ? std::atoi(argv[1]) : 1000, n = argc > 2 ? std::atoi(argv[2]) : 300;
  const std::int32_t stride = n + 3;

  auto affine = ts::kernel("broadcast_2d", [](ts::Ptr<float> x, ts::Ptr<float> row_scale, ts::Ptr<float> col_bias,
                                              ts::Ptr<float> out, ts::Int m, ts::Int n, ts::Int stride) {
    const int BM = static_cast<int>(ts::meta("BM")), BN = static_cast<int>(ts::meta("BN"));
    auto rows = ts::program_id(0) * BM + ts::arange(0, BM);
    auto cols = ts::program_id(1) * BN + ts::arange(0, BN);
    auto mask = (rows.col() < m) && (cols.row() < n);
    auto offs = rows.col() * stride + cols.row();
    auto s = ts::load(row_scale + rows, rows < m);
    auto b = ts::load(col_bias + cols, cols < n);
    ts::store(out + offs, ts::load(x + offs, mask) * s.col() + b.row(), mask);
  });

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
    affine[{.grid = {ts::cdiv(m, 32), ts::cdiv(n, 64)}, .meta = {{"BM", 32}, {"BN", 64}}, .num_warps = 4}](
        x, s, b, out, m, n, stride);
    ts::synchronize();
    auto r = out.to_host();
    for (std::int32_t i = 0; i < m; ++i)
      for (std::int32_t j = 0; j < stride; ++j) {
        float ref = j < n ? hx[i * stride + j] * hs[i] + hb[j] : -7.0f;  // padding untouched
        if (std::abs(r[i * stride + j] - ref) > 1e-6f * std::max(1.0f, std::abs(ref))) {
          std::printf("FAILED at (%d, %d): %g != %g\n", i, j, r[i * stride + j], ref);
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

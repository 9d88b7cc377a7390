// Memory-bound fused kernels over rows: softmax, layer norm and RMSNorm (forward), written as in
// Triton's tutorials, with plain C++ host references. Shared by the examples, tests and benchmarks.
#pragma once
#include <tessera/tessera.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace tessera_examples {
namespace ts = tessera;

inline std::int64_t next_pow2(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// ---- softmax over each row of an M x N matrix (row stride in elements); one program per row.
inline auto make_softmax() {
  return ts::kernel("softmax", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int stride, ts::Int n_cols) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto row = ts::program_id(0);
    auto cols = ts::arange(0, BLOCK);
    auto mask = cols < n_cols;
    auto v = ts::load(x + row * stride + cols, mask, -std::numeric_limits<float>::infinity());
    auto shifted = v - ts::max(v, 0);
    auto num = ts::exp(shifted);
    auto y = num / ts::sum(num, 0);
    ts::store(out + row * stride + cols, y, mask);
  });
}

inline ts::LaunchOptions softmax_options(std::int64_t rows, std::int64_t cols, ts::Executor ex = ts::Executor::Auto) {
  const std::int64_t block = next_pow2(cols);
  const int warps = block >= 8192 ? 16 : block >= 2048 ? 8 : 4;
  return {.grid = {rows}, .meta = {{"BLOCK", block}}, .num_warps = warps, .executor = ex};
}

inline void softmax_reference(std::span<const float> x, std::span<float> out, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (std::int64_t c = 0; c < cols; ++c) m = std::max<double>(m, x[r * cols + c]);
    for (std::int64_t c = 0; c < cols; ++c) s += std::exp(x[r * cols + c] - m);
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = static_cast<float>(std::exp(x[r * cols + c] - m) / s);
  }
}

// ---- layer norm forward over rows of f16: y = (x - mean) * rstd * w + b; also writes mean and rstd
// (f32) for the backward pass. One program per row, the row in one tile.
inline auto make_layer_norm_fwd() {
  return ts::kernel("layer_norm_fwd", [](ts::Ptr<ts::half> x, ts::Ptr<ts::half> y, ts::Ptr<ts::half> w,
                                         ts::Ptr<ts::half> b, ts::Ptr<float> mean_out, ts::Ptr<float> rstd_out,
                                         ts::Int stride, ts::Int n, ts::Float eps) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto row = ts::program_id(0);
    auto cols = ts::arange(0, BLOCK);
    auto mask = cols < n;
    auto v = ts::load(x + row * stride + cols, mask, 0.0f).to<float>();
    auto mean = ts::sum(v, 0) / n.to<float>();
    auto centered = ts::where(mask, v - mean, 0.0f);
    auto var = ts::sum(centered * centered, 0) / n.to<float>();
    auto rstd = 1.0f / ts::sqrt(var + eps);
    auto wv = ts::load(w + cols, mask).to<float>();
    auto bv = ts::load(b + cols, mask).to<float>();
    ts::store(y + row * stride + cols, (centered * rstd * wv + bv).to<ts::half>(), mask);
    ts::store(mean_out + row, mean);
    ts::store(rstd_out + row, rstd);
  });
}

inline ts::LaunchOptions layer_norm_options(std::int64_t rows, std::int64_t cols, ts::Executor ex = ts::Executor::Auto) {
  const std::int64_t block = next_pow2(cols);
  const int warps = std::min<std::int64_t>(std::max<std::int64_t>(block * 2 / 256, 1), 8) >= 8 ? 8 : 4;
  return {.grid = {rows}, .meta = {{"BLOCK", block}}, .num_warps = warps, .executor = ex};
}

inline void layer_norm_reference(std::span<const ts::half> x, std::span<const ts::half> w, std::span<const ts::half> b,
                                 std::span<float> y, std::int64_t rows, std::int64_t cols, float eps) {
  for (std::int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (std::int64_t c = 0; c < cols; ++c) mean += static_cast<float>(x[r * cols + c]);
    mean /= static_cast<double>(cols);
    for (std::int64_t c = 0; c < cols; ++c) {
      double d = static_cast<float>(x[r * cols + c]) - mean;
      var += d * d;
    }
    var /= static_cast<double>(cols);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (std::int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = static_cast<float>((static_cast<float>(x[r * cols + c]) - mean) * rstd * static_cast<float>(w[c]) +
                                           static_cast<float>(b[c]));
  }
}

// ---- RMSNorm forward over rows of f16: y = x * rsqrt(mean(x^2) + eps) * w; writes rstd (f32).
inline auto make_rms_norm_fwd() {
  return ts::kernel("rms_norm_fwd", [](ts::Ptr<ts::half> x, ts::Ptr<ts::half> y, ts::Ptr<ts::half> w,
                                       ts::Ptr<float> rstd_out, ts::Int stride, ts::Int n, ts::Float eps) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto row = ts::program_id(0);
    auto cols = ts::arange(0, BLOCK);
    auto mask = cols < n;
    auto v = ts::load(x + row * stride + cols, mask, 0.0f).to<float>();
    auto rstd = 1.0f / ts::sqrt(ts::sum(v * v, 0) / n.to<float>() + eps);
    auto wv = ts::load(w + cols, mask).to<float>();
    ts::store(y + row * stride + cols, (v * rstd * wv).to<ts::half>(), mask);
    ts::store(rstd_out + row, rstd);
  });
}

inline void rms_norm_reference(std::span<const ts::half> x, std::span<const ts::half> w, std::span<float> y,
                               std::int64_t rows, std::int64_t cols, float eps) {
  for (std::int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (std::int64_t c = 0; c < cols; ++c) ss += std::pow(static_cast<float>(x[r * cols + c]), 2);
    const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(cols) + eps);
    for (std::int64_t c = 0; c < cols; ++c)
      y[r * cols + c] = static_cast<float>(static_cast<float>(x[r * cols + c]) * rstd * static_cast<float>(w[c]));
  }
}

}  // namespace tessera_examples

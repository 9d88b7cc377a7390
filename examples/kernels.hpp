// The example kernels, one `make_<name>()` each, with the launch options the example programs use
// and a plain C++ host reference. The example programs and the tests (tests/pipeline) share this
// header, so that the tests run exactly the kernels the examples show.
#pragma once
#include <tessera/tessera.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

namespace tessera_examples {

namespace ts = tessera;

// ---- vector_add: out = x + y, written as in Triton's tutorial.

inline auto make_vector_add() {
  return ts::kernel("add", [](ts::Ptr<float> x, ts::Ptr<float> y, ts::Ptr<float> out, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));  // a plain C++ int while tracing
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    ts::store(out + offs, ts::load(x + offs, mask) + ts::load(y + offs, mask), mask);
  });
}

inline constexpr int kVectorAddBlock = 1024;

inline ts::LaunchOptions vector_add_options(std::int64_t n, ts::Executor ex = ts::Executor::Auto) {
  return {.grid = {ts::cdiv(n, kVectorAddBlock)}, .meta = {{"BLOCK", kVectorAddBlock}}, .num_warps = 4, .executor = ex};
}

// The same single f32 addition per element as the kernel, so the result is bit-exact.
inline void vector_add_reference(std::span<const float> x, std::span<const float> y, std::span<float> out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = x[i] + y[i];
}

// ---- fused_elu: out = f16(elu(f32(x) * scale + bias)), one pass over memory instead of four.

inline auto make_fused_elu() {
  return ts::kernel("fused_elu", [](ts::Ptr<ts::half> x, ts::Ptr<ts::half> out, ts::Float scale, ts::Float bias,
                                    ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto v = ts::load(x + offs, mask).to<float>() * scale + bias;
    auto y = ts::where(v > 0.0f, v, ts::exp(v) - 1.0f);
    ts::store(out + offs, y.to<ts::half>(), mask);
  });
}

inline constexpr int kFusedEluBlock = 2048;

inline ts::LaunchOptions fused_elu_options(std::int64_t n, ts::Executor ex = ts::Executor::Auto) {
  return {.grid = {ts::cdiv(n, kFusedEluBlock)}, .meta = {{"BLOCK", kFusedEluBlock}}, .num_warps = 8, .executor = ex};
}

// In f32 and unrounded (expm1 rather than exp - 1): the kernel's f16 result must lie within f16
// precision (1e-2 relative) of the exact value, not reproduce the kernel's own rounding.
inline void fused_elu_reference(std::span<const ts::half> x, std::span<float> out, float scale, float bias) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const float v = static_cast<float>(x[i]) * scale + bias;
    out[i] = v > 0 ? v : std::expm1(v);
  }
}

// ---- broadcast_2d: out[i, j] = x[i, j] * row_scale[i] + col_bias[j] over an M x N row-major
// matrix with a row stride, masked on both dims. x[:, None] in Triton is .col() here, x[None, :]
// is .row().

inline auto make_broadcast_2d() {
  return ts::kernel("broadcast_2d", [](ts::Ptr<float> x, ts::Ptr<float> row_scale, ts::Ptr<float> col_bias,
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
}

inline constexpr int kBroadcast2dBlockM = 32, kBroadcast2dBlockN = 64;

inline ts::LaunchOptions broadcast_2d_options(std::int64_t m, std::int64_t n, ts::Executor ex = ts::Executor::Auto) {
  return {.grid = {ts::cdiv(m, kBroadcast2dBlockM), ts::cdiv(n, kBroadcast2dBlockN)},
          .meta = {{"BM", kBroadcast2dBlockM}, {"BN", kBroadcast2dBlockN}},
          .num_warps = 4,
          .executor = ex};
}

// Writes out[i * stride + j] for i < m, j < n only: the padding columns keep what they held, as
// with the kernel. The product and the sum are separate f32 roundings, as in the kernel (ISO C++
// mode does not contract them into an fma).
inline void broadcast_2d_reference(std::span<const float> x, std::span<const float> row_scale,
                                   std::span<const float> col_bias, std::span<float> out, std::int64_t m,
                                   std::int64_t n, std::int64_t stride) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const float product = x[i * stride + j] * row_scale[i];
      out[i * stride + j] = product + col_bias[j];
    }
}

}  // namespace tessera_examples

// Attention forward (FlashAttention-2's loop, as Triton's tutorial 06): O = softmax(Q·Kᵀ·scale)·V
// per (batch, head), causal or not, without materializing the N x N scores. Shared by the
// example (attention.cpp) and the tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include <tessera/tessera.hpp>

namespace tessera_examples {
namespace ts = tessera;

// Q, K, V and O are [heads, n, HEAD_D] row-major (heads: batch x heads, any n). Program (i, h)
// takes BLOCK_M query rows of head h and walks the keys in blocks of BLOCK_N, keeping a running
// row max m, a running sum l of exp2 of the scaled scores less m, and the unnormalized output
// acc, both rescaled by exp2(m_old - m_new) when the max grows. P = exp2(scores - m) is cast to
// In as the second dot's left operand (chained dots). With CAUSAL, key j is seen by query i only
// if j <= i, and the loop stops after the block holding the program's last row. O in In.
// Offsets are 32-bit: heads * n * HEAD_D must stay below 2^31.
template <class In>
auto make_attention(const char* name = "attention") {
  return ts::kernel(name, [](ts::Ptr<In> q, ts::Ptr<In> k, ts::Ptr<In> v, ts::Ptr<In> o, ts::Int n, ts::Float scale) {
    const int BM = static_cast<int>(ts::meta("BLOCK_M")), BN = static_cast<int>(ts::meta("BLOCK_N"));
    const int D = static_cast<int>(ts::meta("HEAD_D"));
    const bool causal = ts::meta("CAUSAL") != 0;
    const float inf = std::numeric_limits<float>::infinity();
    auto head = ts::program_id(1) * n * D;
    auto rows = ts::program_id(0) * BM + ts::arange(0, BM);
    auto dims = ts::arange(0, D);
    auto q_tile = ts::load(q + head + rows.col() * D + dims.row(), rows.col() < n, 0);
    auto scale_log2 = scale * 1.4426950408889634f;  // exp(x) = exp2(x * log2(e))
    auto m = ts::full<float>({BM}, -inf);
    auto l = ts::zeros<float>({BM});
    auto acc = ts::zeros<float>({BM, D});
    auto keys_end = causal ? ts::minimum(n, (ts::program_id(0) + 1) * BM) : n;
    ts::for_range(0, keys_end, BN, [&](ts::Int j0) {
      auto keys = j0 + ts::arange(0, BN);
      auto k_t = ts::load(k + head + keys.row() * D + dims.col(), keys.row() < n, 0);  // D x BN
      auto seen = keys.row() < n;
      if (causal) seen = seen & (keys.row() <= rows.col());
      // Key 0 is seen by every row from the first block on, so m is finite there and
      // exp2(m - m_new) is never exp2(-inf - -inf).
      auto scores = ts::where(seen, ts::dot(q_tile, k_t) * scale_log2, -inf);
      auto m_new = ts::maximum(m, ts::max(scores, 1));
      auto p = ts::exp2(scores - m_new.col());
      auto alpha = ts::exp2(m - m_new);
      l = l * alpha + ts::sum(p, 1);
      auto v_tile = ts::load(v + head + keys.col() * D + dims.row(), keys.col() < n, 0);
      acc = ts::dot(p.template to<In>(), v_tile, acc * alpha.col());
      m = m_new;
    });
    ts::store(o + head + rows.col() * D + dims.row(), (acc / l.col()).template to<In>(), rows.col() < n);
  });
}

struct AttentionConfig {
  std::int64_t block_m = 128, block_n = 64;
  int num_warps = 8, num_stages = 1;
};

// Head_dim above 64: 128 query rows per program on 8 warps, keys in blocks of 32 (64 spills
// 52-64 bytes on sm_80 there: the O accumulator alone is 64 registers a thread). Head_dim 64: 64
// query rows on 4 warps, keys by 64 (two or more programs per SM: 64x64/w4/s2 350.9 TFLOP/s
// against 334.7 for 128x64/w8/s2 on an H100, 325.9 against 312.7 on the H200; session 32).
// num_stages = 2: Q stored into shared memory once, K and V copied one block ahead into rings
// (pipeline_loads.hpp); at head_dim 128 that took 169 registers on sm_90a and 182 on sm_80
// against 214 and 243 at num_stages = 1, and 128 on sm_90a once P was staged from the layout it
// is computed in (ptxas 13.0, session 31).
inline AttentionConfig attention_config(std::int64_t head_dim) {
  if (head_dim > 64) return {.block_m = 128, .block_n = 32, .num_warps = 8, .num_stages = 2};
  return {.block_m = 64, .block_n = 64, .num_warps = 4, .num_stages = 2};
}

inline ts::LaunchOptions attention_options(std::int64_t heads, std::int64_t n, std::int64_t head_dim, bool causal,
                                           const AttentionConfig& cfg = {}, ts::Executor ex = ts::Executor::Auto) {
  return {.grid = {(n + cfg.block_m - 1) / cfg.block_m, heads},
          .meta = {{"BLOCK_M", cfg.block_m}, {"BLOCK_N", cfg.block_n}, {"HEAD_D", head_dim}, {"CAUSAL", causal ? 1 : 0}},
          .num_warps = cfg.num_warps,
          .num_stages = cfg.num_stages,
          .executor = ex};
}

// Row i of head h of softmax(Q·Kᵀ·scale)·V in double from the same inputs, [heads, n, d]
// row-major (the benchmark checks sampled rows).
template <class In>
std::vector<double> attention_reference_row(std::span<const In> q, std::span<const In> k, std::span<const In> v,
                                            std::int64_t n, std::int64_t d, double scale, bool causal, std::int64_t h,
                                            std::int64_t i) {
  auto at = [&](std::span<const In> t, std::int64_t row, std::int64_t col) {
    return static_cast<double>(static_cast<float>(t[static_cast<std::size_t>((h * n + row) * d + col)]));
  };
  const std::int64_t keys = causal ? i + 1 : n;
  std::vector<double> s(static_cast<std::size_t>(keys)), o(static_cast<std::size_t>(d));
  double mx = -std::numeric_limits<double>::infinity(), sum = 0;
  for (std::int64_t j = 0; j < keys; ++j) {
    double dotp = 0;
    for (std::int64_t t = 0; t < d; ++t) dotp += at(q, i, t) * at(k, j, t);
    s[static_cast<std::size_t>(j)] = dotp * scale;
    mx = std::max(mx, s[static_cast<std::size_t>(j)]);
  }
  for (double x : s) sum += std::exp(x - mx);
  for (std::int64_t j = 0; j < keys; ++j) {
    const double p = std::exp(s[static_cast<std::size_t>(j)] - mx) / sum;
    for (std::int64_t t = 0; t < d; ++t) o[static_cast<std::size_t>(t)] += p * at(v, j, t);
  }
  return o;
}

// Every row of every head, [heads, n, d].
template <class In>
std::vector<double> attention_reference(std::span<const In> q, std::span<const In> k, std::span<const In> v,
                                        std::int64_t heads, std::int64_t n, std::int64_t d, double scale, bool causal) {
  std::vector<double> o;
  o.reserve(static_cast<std::size_t>(heads * n * d));
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < n; ++i) {
      const auto row = attention_reference_row(q, k, v, n, d, scale, causal, h, i);
      o.insert(o.end(), row.begin(), row.end());
    }
  return o;
}

}  // namespace tessera_examples

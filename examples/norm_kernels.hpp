// Memory-bound fused kernels over rows: softmax (one tile per row, and online over column blocks),
// layer norm and RMSNorm (forward and backward), written as in Triton's tutorials, with plain C++
// host references. Shared by the examples, tests and benchmarks.
#pragma once
#include <tessera/tessera.hpp>

#include <algorithm>
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

// ---- online softmax over rows too long for one tile (f32): one program per row, a loop over
// column blocks carrying the running max m and the running sum s of exp(x - m); a second loop
// writes exp(x - m) / s. The row is read twice and written once, whatever its length.
inline auto make_online_softmax() {
  return ts::kernel("online_softmax", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int stride, ts::Int n_cols) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto row = ts::program_id(0);
    auto x_row = x + row * stride;
    auto out_row = out + row * stride;
    ts::Float m = ts::full<float>({}, -std::numeric_limits<float>::infinity());
    ts::Float s = ts::zeros<float>({});
    ts::for_range(0, n_cols, BLOCK, [&](ts::Int start) {
      auto cols = start + ts::arange(0, BLOCK);
      // Masked lanes read -inf, so they add exp(-inf) = 0 to the sum. Every block holds at least
      // one real column, so m_new is finite from the first block on and m - m_new is never
      // -inf - -inf.
      auto v = ts::load(x_row + cols, cols < n_cols, -std::numeric_limits<float>::infinity());
      auto m_new = ts::maximum(m, ts::max(v, 0));
      s = s * ts::exp(m - m_new) + ts::sum(ts::exp(v - m_new), 0);
      m = m_new;
    });
    auto inv_s = 1.0f / s;
    ts::for_range(0, n_cols, BLOCK, [&](ts::Int start) {
      auto cols = start + ts::arange(0, BLOCK);
      auto mask = cols < n_cols;
      auto v = ts::load(x_row + cols, mask, 0.0f);
      ts::store(out_row + cols, ts::exp(v - m) * inv_s, mask);
    });
  });
}

inline constexpr std::int64_t kOnlineSoftmaxBlock = 4096;

inline ts::LaunchOptions online_softmax_options(std::int64_t rows, std::int64_t block = kOnlineSoftmaxBlock,
                                                ts::Executor ex = ts::Executor::Auto) {
  return {.grid = {rows}, .meta = {{"BLOCK", block}}, .num_warps = block >= 4096 ? 8 : 4, .executor = ex};
}

// ---- backward passes of layer norm and RMSNorm over f16 rows (Triton's tutorial 05).
//
// dX is computed row by row as in the tutorial's _layer_norm_bwd_dx_fused. dW (and dB) are sums over
// all M rows; instead of the tutorial's GROUP_SIZE_M partial buffers guarded by a spin lock (the DSL
// has no while loop to spin in), the grid has a fixed number of programs P, program p takes rows
// p, p + P, p + 2P, ..., keeps its partial dW/dB in registers across those rows (loop-carried f32
// tiles) and writes them once to row p of a [P, N] f32 buffer; a second kernel sums the P rows.
// Deterministic, no atomics, and the partials cost 2 * P * N * 4 bytes against the 6 * M * N the
// dX pass moves.

// Programs: at least one per SM of a large GPU (an H200 has 132), at most 512, and about one per
// 32 rows, so that the partial buffers (2 * P * N * 4 bytes) stay a few percent of the 6 * M * N
// bytes the dX pass moves: with 512 programs for 4096 x 8192 they were 17% of it and the pass ran
// at 0.90 x Triton on the H200.
inline constexpr std::int64_t kNormBwdMinPrograms = 132, kNormBwdMaxPrograms = 512;

inline std::int64_t norm_bwd_programs(std::int64_t rows) {
  return std::min(rows, std::clamp(rows / 32, kNormBwdMinPrograms, kNormBwdMaxPrograms));
}

// The dX kernels' row loop is pipelined (ts::LoopOptions): each program's next rows of x and dy
// are copied into shared memory (cp.async) ROW_STAGES - 1 rows ahead, while this row's
// reductions run, without holding them in registers. Up to two rows ahead, in at most 160 KB of
// shared memory (a 4096-wide f16 row: 48 KB); 1 (as written) where two stages do not fit.
inline std::int64_t norm_bwd_row_stages(std::int64_t block) {
  return std::clamp<std::int64_t>(160 * 1024 / (2 * block * 2), 1, 3);
}

inline ts::LaunchOptions norm_bwd_dx_options(std::int64_t cols, std::int64_t programs,
                                             ts::Executor ex = ts::Executor::Auto) {
  const std::int64_t block = next_pow2(cols);
  // An 8192-wide row holds seven f32 tiles live (x, dy, w, x_hat, w*dy and two accumulators):
  // 16 warps keep that in registers.
  const int warps = block >= 8192 ? 16 : block >= 1024 ? 8 : 4;
  return {.grid = {programs},
          .meta = {{"BLOCK", block}, {"ROW_STAGES", norm_bwd_row_stages(block)}},
          .num_warps = warps,
          .executor = ex};
}

// The column sums of the [P, N] partial buffers: one program per BLOCK_N columns, a loop over
// BLOCK_M rows at a time (the tutorial's _layer_norm_bwd_dwdb shape).
inline constexpr std::int64_t kPartialSumBlockM = 32, kPartialSumBlockN = 128;

inline ts::LaunchOptions partial_sum_options(std::int64_t cols, ts::Executor ex = ts::Executor::Auto) {
  return {.grid = {ts::cdiv(cols, kPartialSumBlockN)},
          .meta = {{"BLOCK_M", kPartialSumBlockM}, {"BLOCK_N", kPartialSumBlockN}},
          .num_warps = 4,
          .executor = ex};
}

// dX of layer norm, and each program's partial dW and dB. x_hat = (x - mean) * rstd;
// dx = (w*dy - (x_hat * mean(x_hat * w*dy) + mean(w*dy))) * rstd; dW += dy * x_hat; dB += dy.
inline auto make_layer_norm_bwd_dx() {
  return ts::kernel("layer_norm_bwd_dx", [](ts::Ptr<ts::half> x, ts::Ptr<ts::half> dy, ts::Ptr<ts::half> dx,
                                            ts::Ptr<ts::half> w, ts::Ptr<float> mean, ts::Ptr<float> rstd,
                                            ts::Ptr<float> dw_partial, ts::Ptr<float> db_partial, ts::Int stride,
                                            ts::Int m, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto pid = ts::program_id(0);
    auto cols = ts::arange(0, BLOCK);
    auto mask = cols < n;
    auto wv = ts::load(w + cols, mask, 0.0f).to<float>();  // the same for every row: loaded once
    auto inv_n = 1.0f / n.to<float>();
    auto dw_acc = ts::zeros<float>({BLOCK});
    auto db_acc = ts::zeros<float>({BLOCK});
    const ts::LoopOptions rows_ahead{.num_stages = static_cast<int>(ts::meta("ROW_STAGES"))};
    ts::for_range(pid, m, ts::num_programs(0), [&](ts::Int row) {
      auto offs = row * stride + cols;
      auto xv = ts::load(x + offs, mask, 0.0f).to<float>();
      auto dyv = ts::load(dy + offs, mask, 0.0f).to<float>();
      auto mu = ts::load(mean + row);
      auto r = ts::load(rstd + row);
      // Masked lanes would give x_hat = -mean * rstd: zero them so the row sums and dW see nothing.
      auto x_hat = ts::where(mask, (xv - mu) * r, 0.0f);
      auto wdy = wv * dyv;
      // Both row sums in one tuple reduction: one shared-memory exchange and one barrier for the two.
      auto [sum_xw, sum_w] = ts::reduce(std::tuple{x_hat * wdy, wdy}, 0,
                                         [](ts::Float a1, ts::Float b1, ts::Float a2, ts::Float b2) {
                                           return std::tuple{a1 + a2, b1 + b2};
                                         });
      auto c1 = sum_xw * inv_n;
      auto c2 = sum_w * inv_n;
      ts::store(dx + offs, ((wdy - (x_hat * c1 + c2)) * r).to<ts::half>(), mask);
      dw_acc = dw_acc + dyv * x_hat;
      db_acc = db_acc + dyv;
    }, rows_ahead);
    ts::store(dw_partial + pid * n + cols, dw_acc, mask);
    ts::store(db_partial + pid * n + cols, db_acc, mask);
  });
}

// dW = the column sums of dw_partial and dB those of db_partial ([p_rows, N] f32), stored as f16
// (the weights' type, as in the tutorial).
inline auto make_layer_norm_bwd_dwdb() {
  return ts::kernel("layer_norm_bwd_dwdb", [](ts::Ptr<float> dw_partial, ts::Ptr<float> db_partial,
                                              ts::Ptr<ts::half> dw, ts::Ptr<ts::half> db, ts::Int p_rows, ts::Int n) {
    const int BM = static_cast<int>(ts::meta("BLOCK_M")), BN = static_cast<int>(ts::meta("BLOCK_N"));
    auto cols = ts::program_id(0) * BN + ts::arange(0, BN);
    auto dw_acc = ts::zeros<float>({BM, BN});
    auto db_acc = ts::zeros<float>({BM, BN});
    ts::for_range(0, p_rows, BM, [&](ts::Int i) {
      auto rows = i + ts::arange(0, BM);
      auto mask = (rows.col() < p_rows) && (cols.row() < n);
      auto offs = rows.col() * n + cols.row();
      dw_acc = dw_acc + ts::load(dw_partial + offs, mask, 0.0f);
      db_acc = db_acc + ts::load(db_partial + offs, mask, 0.0f);
    });
    ts::store(dw + cols, ts::sum(dw_acc, 0).to<ts::half>(), cols < n);
    ts::store(db + cols, ts::sum(db_acc, 0).to<ts::half>(), cols < n);
  });
}

// dX of RMSNorm (y = x * rstd * w), and each program's partial dW. x_hat = x * rstd;
// dx = (w*dy - x_hat * mean(x_hat * w*dy)) * rstd; dW += dy * x_hat.
inline auto make_rms_norm_bwd_dx() {
  return ts::kernel("rms_norm_bwd_dx", [](ts::Ptr<ts::half> x, ts::Ptr<ts::half> dy, ts::Ptr<ts::half> dx,
                                          ts::Ptr<ts::half> w, ts::Ptr<float> rstd, ts::Ptr<float> dw_partial,
                                          ts::Int stride, ts::Int m, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto pid = ts::program_id(0);
    auto cols = ts::arange(0, BLOCK);
    auto mask = cols < n;
    auto wv = ts::load(w + cols, mask, 0.0f).to<float>();
    auto inv_n = 1.0f / n.to<float>();
    auto dw_acc = ts::zeros<float>({BLOCK});
    const ts::LoopOptions rows_ahead{.num_stages = static_cast<int>(ts::meta("ROW_STAGES"))};
    ts::for_range(pid, m, ts::num_programs(0), [&](ts::Int row) {
      auto offs = row * stride + cols;
      auto xv = ts::load(x + offs, mask, 0.0f).to<float>();
      auto dyv = ts::load(dy + offs, mask, 0.0f).to<float>();
      auto r = ts::load(rstd + row);
      auto x_hat = xv * r;  // masked lanes load 0, so x_hat is 0 there already
      auto wdy = wv * dyv;
      auto c1 = ts::sum(x_hat * wdy, 0) * inv_n;
      ts::store(dx + offs, ((wdy - x_hat * c1) * r).to<ts::half>(), mask);
      dw_acc = dw_acc + dyv * x_hat;
    }, rows_ahead);
    ts::store(dw_partial + pid * n + cols, dw_acc, mask);
  });
}

// dW = the column sums of dw_partial ([p_rows, N] f32), stored as f16.
inline auto make_rms_norm_bwd_dw() {
  return ts::kernel("rms_norm_bwd_dw", [](ts::Ptr<float> dw_partial, ts::Ptr<ts::half> dw, ts::Int p_rows,
                                          ts::Int n) {
    const int BM = static_cast<int>(ts::meta("BLOCK_M")), BN = static_cast<int>(ts::meta("BLOCK_N"));
    auto cols = ts::program_id(0) * BN + ts::arange(0, BN);
    auto acc = ts::zeros<float>({BM, BN});
    ts::for_range(0, p_rows, BM, [&](ts::Int i) {
      auto rows = i + ts::arange(0, BM);
      auto mask = (rows.col() < p_rows) && (cols.row() < n);
      acc = acc + ts::load(dw_partial + rows.col() * n + cols.row(), mask, 0.0f);
    });
    ts::store(dw + cols, ts::sum(acc, 0).to<ts::half>(), cols < n);
  });
}

// The statistics the forward passes save, from the f16 input, computed in double and rounded to
// f32 as the kernels store them: what the backward passes (and their references) take as input.
inline void layer_norm_stats(std::span<const ts::half> x, std::span<float> mean, std::span<float> rstd,
                             std::int64_t rows, std::int64_t cols, float eps) {
  for (std::int64_t r = 0; r < rows; ++r) {
    double mu = 0, var = 0;
    for (std::int64_t c = 0; c < cols; ++c) mu += static_cast<float>(x[r * cols + c]);
    mu /= static_cast<double>(cols);
    for (std::int64_t c = 0; c < cols; ++c) var += std::pow(static_cast<float>(x[r * cols + c]) - mu, 2);
    mean[r] = static_cast<float>(mu);
    rstd[r] = static_cast<float>(1.0 / std::sqrt(var / static_cast<double>(cols) + eps));
  }
}

inline void rms_norm_stats(std::span<const ts::half> x, std::span<float> rstd, std::int64_t rows, std::int64_t cols,
                           float eps) {
  for (std::int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (std::int64_t c = 0; c < cols; ++c) ss += std::pow(static_cast<float>(x[r * cols + c]), 2);
    rstd[r] = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(cols) + eps));
  }
}

// Layer norm backward in double from the same f16 inputs and f32 statistics the kernels get
// (rows stored contiguously): dx [rows * cols], dw and db [cols].
inline void layer_norm_bwd_reference(std::span<const ts::half> x, std::span<const ts::half> dy,
                                     std::span<const ts::half> w, std::span<const float> mean,
                                     std::span<const float> rstd, std::span<double> dx, std::span<double> dw,
                                     std::span<double> db, std::int64_t rows, std::int64_t cols) {
  std::fill(dw.begin(), dw.end(), 0.0);
  std::fill(db.begin(), db.end(), 0.0);
  std::vector<double> x_hat(static_cast<std::size_t>(cols)), wdy(static_cast<std::size_t>(cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    double c1 = 0, c2 = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      const double g = static_cast<float>(dy[r * cols + c]);
      x_hat[c] = (static_cast<double>(static_cast<float>(x[r * cols + c])) - mean[r]) * rstd[r];
      wdy[c] = static_cast<double>(static_cast<float>(w[c])) * g;
      c1 += x_hat[c] * wdy[c];
      c2 += wdy[c];
      dw[c] += g * x_hat[c];
      db[c] += g;
    }
    c1 /= static_cast<double>(cols);
    c2 /= static_cast<double>(cols);
    for (std::int64_t c = 0; c < cols; ++c) dx[r * cols + c] = (wdy[c] - (x_hat[c] * c1 + c2)) * rstd[r];
  }
}

inline void rms_norm_bwd_reference(std::span<const ts::half> x, std::span<const ts::half> dy,
                                   std::span<const ts::half> w, std::span<const float> rstd, std::span<double> dx,
                                   std::span<double> dw, std::int64_t rows, std::int64_t cols) {
  std::fill(dw.begin(), dw.end(), 0.0);
  std::vector<double> x_hat(static_cast<std::size_t>(cols)), wdy(static_cast<std::size_t>(cols));
  for (std::int64_t r = 0; r < rows; ++r) {
    double c1 = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      const double g = static_cast<float>(dy[r * cols + c]);
      x_hat[c] = static_cast<double>(static_cast<float>(x[r * cols + c])) * rstd[r];
      wdy[c] = static_cast<double>(static_cast<float>(w[c])) * g;
      c1 += x_hat[c] * wdy[c];
      dw[c] += g * x_hat[c];
    }
    c1 /= static_cast<double>(cols);
    for (std::int64_t c = 0; c < cols; ++c) dx[r * cols + c] = (wdy[c] - x_hat[c] * c1) * rstd[r];
  }
}

// The bytes each backward pass must move (what the benchmarks divide by; tests/bench/triton_ref.py
// counts the same): x and dy read and dx written (f16), the statistics (f32) and w read, dW (and
// dB) written (f16). The partial buffers are the implementation's choice and are not counted.
inline double layer_norm_bwd_bytes(std::int64_t rows, std::int64_t cols) {
  return 3.0 * 2 * static_cast<double>(rows) * static_cast<double>(cols) + 8.0 * static_cast<double>(rows) +
         3.0 * 2 * static_cast<double>(cols);
}
inline double rms_norm_bwd_bytes(std::int64_t rows, std::int64_t cols) {
  return 3.0 * 2 * static_cast<double>(rows) * static_cast<double>(cols) + 4.0 * static_cast<double>(rows) +
         2.0 * 2 * static_cast<double>(cols);
}
// The online softmax reads each row twice (statistics, then output) and writes it once (f32).
inline double online_softmax_bytes(std::int64_t rows, std::int64_t cols) {
  return 3.0 * 4 * static_cast<double>(rows) * static_cast<double>(cols);
}

// Softmax in double (the online kernel's reference; the f32 one above rounds as it goes).
inline void softmax_reference_f64(std::span<const float> x, std::span<double> out, std::int64_t rows,
                                  std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (std::int64_t c = 0; c < cols; ++c) m = std::max<double>(m, x[r * cols + c]);
    for (std::int64_t c = 0; c < cols; ++c) s += std::exp(static_cast<double>(x[r * cols + c]) - m);
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = std::exp(static_cast<double>(x[r * cols + c]) - m) / s;
  }
}

// Norm-wise relative error ||got - want|| / ||want|| (2-norm), and whether every element is finite
// (an unwritten, poisoned element is not) and within elem_tol * (|want| + floor) of want; floor
// defaults to rms(want), so that elements near zero are held to the precision of the whole
// output (a softmax passes a tiny floor instead: each of its elements is accurate relative to
// itself).
struct ErrorReport {
  double relative = 0;
  std::int64_t bad_elements = 0, first_bad = -1;
  bool ok(double norm_tol) const { return relative <= norm_tol && bad_elements == 0; }
};

template <class T>
ErrorReport compare(std::span<const T> got, std::span<const double> want, double elem_tol, double floor = -1) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = static_cast<double>(static_cast<float>(got[i])) - want[i];
    num += d * d;
    den += want[i] * want[i];
  }
  ErrorReport e;
  e.relative = std::sqrt(num / std::max(den, 1e-300));
  if (!std::isfinite(e.relative)) e.relative = INFINITY;
  if (floor < 0) floor = std::sqrt(den / static_cast<double>(std::max<std::size_t>(want.size(), 1)));
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double g = static_cast<float>(got[i]);
    if (!(std::abs(g - want[i]) <= elem_tol * (std::abs(want[i]) + floor)) && e.bad_elements++ == 0)
      e.first_bad = static_cast<std::int64_t>(i);
  }
  return e;
}

}  // namespace tessera_examples

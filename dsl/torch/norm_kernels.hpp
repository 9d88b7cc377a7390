// Layer norm and RMSNorm over rows, forward and backward, as tessera kernels for one element type
// T (f32, f16 or bf16; statistics and accumulation in f32). The shapes are Triton's tutorial 05's:
// forward, one program per row with the row in one tile; backward, P programs each taking rows
// p, p + P, ... and keeping its partial dW (and dB) in registers, written once to a [P, N] f32
// buffer whose columns a second kernel sums (column_sum.hpp; deterministic, no atomics).
#pragma once
#include <tessera/tessera.hpp>

#include "dsl/torch/kernel_name.hpp"
#include "dsl/torch/row_mask.hpp"

#include <algorithm>
#include <cstdint>

namespace tessera::torch_ops {
namespace ts = ::tessera;

// y = (x - mean) * rstd * w + b; writes mean and rstd (f32) for the backward pass.
template <class T>
auto make_layer_norm_fwd() {
  return ts::kernel(kernel_name<T>("layer_norm_fwd"), [](ts::Ptr<T> x, ts::Ptr<T> y, ts::Ptr<T> w, ts::Ptr<T> b,
                                                       ts::Ptr<float> mean_out, ts::Ptr<float> rstd_out, ts::Int n,
                                                       ts::Float eps) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto row = ts::program_id(0);
    auto cols = ts::arange(0, BLOCK);
    auto mask = row_mask(cols, n);
    auto v = ts::load(x + row * n + cols, mask, 0.0f).template to<float>();
    auto mean = ts::sum(v, 0) / n.to<float>();
    auto centered = ts::where(mask, v - mean, 0.0f);
    auto rstd = 1.0f / ts::sqrt(ts::sum(centered * centered, 0) / n.to<float>() + eps);
    auto wv = ts::load(w + cols, mask).template to<float>();
    auto bv = ts::load(b + cols, mask).template to<float>();
    ts::store(y + row * n + cols, (centered * rstd * wv + bv).template to<T>(), mask);
    ts::store(mean_out + row, mean);
    ts::store(rstd_out + row, rstd);
  });
}

// y = x * rsqrt(mean(x^2) + eps) * w; writes rstd (f32).
template <class T>
auto make_rms_norm_fwd() {
  return ts::kernel(kernel_name<T>("rms_norm_fwd"), [](ts::Ptr<T> x, ts::Ptr<T> y, ts::Ptr<T> w,
                                                     ts::Ptr<float> rstd_out, ts::Int n, ts::Float eps) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto row = ts::program_id(0);
    auto cols = ts::arange(0, BLOCK);
    auto mask = row_mask(cols, n);
    auto v = ts::load(x + row * n + cols, mask, 0.0f).template to<float>();
    auto rstd = 1.0f / ts::sqrt(ts::sum(v * v, 0) / n.to<float>() + eps);
    auto wv = ts::load(w + cols, mask).template to<float>();
    ts::store(y + row * n + cols, (v * rstd * wv).template to<T>(), mask);
    ts::store(rstd_out + row, rstd);
  });
}

// Backward programs: at least one per SM of a large GPU (an H200 has 132), at most 512, about one
// per 32 rows, so that the [P, N] partials stay a few percent of the traffic of the dX pass.
inline std::int64_t norm_bwd_programs(std::int64_t rows) {
  return std::min(rows, std::clamp<std::int64_t>(rows / 32, 132, 512));
}

// dX of layer norm and each program's partial dW, dB. x_hat = (x - mean) * rstd;
// dx = (w*dy - (x_hat * mean(x_hat * w*dy) + mean(w*dy))) * rstd.
template <class T>
auto make_layer_norm_bwd_dx() {
  return ts::kernel(kernel_name<T>("layer_norm_bwd_dx"), [](ts::Ptr<T> x, ts::Ptr<T> dy, ts::Ptr<T> dx, ts::Ptr<T> w,
                                                          ts::Ptr<float> mean, ts::Ptr<float> rstd,
                                                          ts::Ptr<float> dw_partial, ts::Ptr<float> db_partial,
                                                          ts::Int m, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto pid = ts::program_id(0);
    auto cols = ts::arange(0, BLOCK);
    auto mask = row_mask(cols, n);
    auto wv = ts::load(w + cols, mask, 0.0f).template to<float>();
    auto inv_n = 1.0f / n.to<float>();
    auto dw_acc = ts::zeros<float>({BLOCK});
    auto db_acc = ts::zeros<float>({BLOCK});
    // The loop is pipelined (LoopOptions): the next rows' x and dy are copied into shared memory
    // (cp.async) ROW_STAGES - 1 rows ahead and mean and rstd loaded one row ahead, so that their
    // latency overlaps this row's reductions without holding a row in registers.
    const ts::LoopOptions rows_ahead{.num_stages = static_cast<int>(ts::meta("ROW_STAGES"))};
    ts::for_range(pid, m, ts::num_programs(0), [&](ts::Int row) {
      auto offs = row * n + cols;
      auto xv = ts::load(x + offs, mask, 0.0f).template to<float>();
      auto dyv = ts::load(dy + offs, mask, 0.0f).template to<float>();
      auto mu = ts::load(mean + row);
      auto r = ts::load(rstd + row);
      // Masked lanes would give x_hat = -mean * rstd: zero them so that the sums see nothing.
      auto x_hat = ts::where(mask, (xv - mu) * r, 0.0f);
      auto wdy = wv * dyv;
      // Both row sums in one reduction: one shared-memory exchange and one barrier for the two.
      auto [sum_xw, sum_w] = ts::reduce(std::tuple{x_hat * wdy, wdy}, 0,
                                         [](ts::Float a1, ts::Float b1, ts::Float a2, ts::Float b2) {
                                           return std::tuple{a1 + a2, b1 + b2};
                                         });
      auto c1 = sum_xw * inv_n;
      auto c2 = sum_w * inv_n;
      ts::store(dx + offs, ((wdy - (x_hat * c1 + c2)) * r).template to<T>(), mask);
      dw_acc = dw_acc + dyv * x_hat;
      db_acc = db_acc + dyv;
    }, rows_ahead);
    ts::store(dw_partial + pid * n + cols, dw_acc, mask);
    ts::store(db_partial + pid * n + cols, db_acc, mask);
  });
}

// dX of RMSNorm and each program's partial dW. x_hat = x * rstd; dx = (w*dy - x_hat * mean(x_hat * w*dy)) * rstd.
template <class T>
auto make_rms_norm_bwd_dx() {
  return ts::kernel(kernel_name<T>("rms_norm_bwd_dx"), [](ts::Ptr<T> x, ts::Ptr<T> dy, ts::Ptr<T> dx, ts::Ptr<T> w,
                                                        ts::Ptr<float> rstd, ts::Ptr<float> dw_partial, ts::Int m,
                                                        ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto pid = ts::program_id(0);
    auto cols = ts::arange(0, BLOCK);
    auto mask = row_mask(cols, n);
    auto wv = ts::load(w + cols, mask, 0.0f).template to<float>();
    auto inv_n = 1.0f / n.to<float>();
    auto dw_acc = ts::zeros<float>({BLOCK});
    // The next row is prefetched in registers, by hand: 0.5-0.8% faster than the pipelined loop
    // layer norm's dX uses (LoopOptions) on an H100 (fp16 32768 x 4096, tests/bench/
    // torch_ops_bench.py, two rounds: 2739 / 2735 against 2725 / 2713 GB/s).
    auto x_next = ts::load(x + pid * n + cols, mask, 0.0f);
    auto dy_next = ts::load(dy + pid * n + cols, mask, 0.0f);
    auto rstd_next = ts::load(rstd + pid);
    ts::for_range(pid, m, ts::num_programs(0), [&](ts::Int row) {
      auto offs = row * n + cols;
      auto xv = x_next.template to<float>();
      auto dyv = dy_next.template to<float>();
      auto r = rstd_next;
      auto next = row + ts::num_programs(0);
      auto has_next = next < m;
      x_next = ts::load(x + next * n + cols, mask && has_next, 0.0f);
      dy_next = ts::load(dy + next * n + cols, mask && has_next, 0.0f);
      rstd_next = ts::load(rstd + next, has_next, 0.0f);
      auto x_hat = xv * r;  // masked lanes loaded 0
      auto wdy = wv * dyv;
      auto c1 = ts::sum(x_hat * wdy, 0) * inv_n;
      ts::store(dx + offs, ((wdy - x_hat * c1) * r).template to<T>(), mask);
      dw_acc = dw_acc + dyv * x_hat;
    });
    ts::store(dw_partial + pid * n + cols, dw_acc, mask);
  });
}

}  // namespace tessera::torch_ops

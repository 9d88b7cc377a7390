// Softmax over rows (forward and backward, the row in one tile) and cross-entropy fused with the
// log-softmax (forward and backward, a loop over column blocks so that any vocabulary fits), as
// tessera kernels for one element type T; arithmetic in f32.
#pragma once
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "dsl/torch/kernel_name.hpp"
#include "dsl/torch/row_mask.hpp"

namespace tessera::torch_ops {
namespace ts = ::tessera;

// y = exp(x - max(x)) / sum(exp(x - max(x))) over each row of n elements.
template <class T>
auto make_softmax_fwd() {
  return ts::kernel(kernel_name<T>("softmax_fwd"), [](ts::Ptr<T> x, ts::Ptr<T> y, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto row = ts::program_id(0);
    auto cols = ts::arange(0, BLOCK);
    auto mask = row_mask(cols, n);
    auto v = ts::load(x + row * n + cols, mask, -std::numeric_limits<float>::infinity()).template to<float>();
    auto num = ts::exp(v - ts::max(v, 0));
    ts::store(y + row * n + cols, (num / ts::sum(num, 0)).template to<T>(), mask);
  });
}

// dx = y * (dy - sum(y * dy)) over each row.
template <class T>
auto make_softmax_bwd() {
  return ts::kernel(kernel_name<T>("softmax_bwd"), [](ts::Ptr<T> y, ts::Ptr<T> dy, ts::Ptr<T> dx, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto row = ts::program_id(0);
    auto cols = ts::arange(0, BLOCK);
    auto mask = row_mask(cols, n);
    auto yv = ts::load(y + row * n + cols, mask, 0.0f).template to<float>();
    auto dyv = ts::load(dy + row * n + cols, mask, 0.0f).template to<float>();
    auto dot = ts::sum(yv * dyv, 0);
    ts::store(dx + row * n + cols, (yv * (dyv - dot)).template to<T>(), mask);
  });
}

// Per row of logits [rows, v]: lse = log(sum(exp(x))), online over column blocks. Each block is
// read as [BLOCK / VEC, VEC] (VEC = 8: one 16-byte vector of 16-bit logits a thread), and every
// group of VEC columns keeps its own running max m and sum s of exp(x - m): the loop's maxima and
// sums stay inside a thread (no shuffle, no barrier), at one exp per logit plus one per group.
// The groups are combined once at the end. m starts at half the lowest finite float, not -inf, so
// that a group that saw only masked (-inf) lanes keeps s = 0 instead of exp(-inf - -inf) = NaN;
// half, so that m·log2(e) stays finite too (-inf·log2(e) + inf would be NaN again).
// loss = lse - x[target]; 0 where target == ignore_index; NaN where the target is outside [0, v)
// (checking that on the host would wait for the device).
template <class T>
auto make_cross_entropy_fwd() {
  return ts::kernel(kernel_name<T>("cross_entropy_fwd"), [](ts::Ptr<T> logits, ts::Ptr<std::int64_t> target,
                                                            ts::Ptr<float> loss, ts::Ptr<float> lse_out, ts::Int v,
                                                            ts::Int ignore_index) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    const int VEC = std::min(BLOCK, 8), GROUPS = BLOCK / VEC;
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    auto row = ts::program_id(0);
    auto x_row = logits + row * v;
    auto t = ts::load(target + row).to<std::int32_t>();
    // x[target] is loaded before the loop: after it, its latency (a load that depends on the
    // target's) would end every program with nothing to overlap it. (H100, session 34: 2574
    // against 2552 GB/s, within run-to-run noise.)
    auto in_range = (t >= 0) && (t < v);
    auto x_t = ts::load(x_row + t, in_range, 0.0f).template to<float>();
    auto m = ts::full<float>({GROUPS}, std::numeric_limits<float>::lowest() / 2);
    auto s = ts::zeros<float>({GROUPS});
    auto lanes = ts::arange(0, GROUPS).col() * VEC + ts::arange(0, VEC).row();  // [GROUPS, VEC]
    // The next block is loaded before this one's arithmetic (carried by the loop). Where meta EVEN
    // is 1 (v a multiple of BLOCK) no load is masked: the last iteration loads the last block again
    // (from cache) instead of nothing, and no lane's registers need -inf set before its load
    // (sm_90a SASS, v = 32768, BLOCK = 8192, 16 logits a thread: 128 -> 105 instructions an iteration;
    // the clamped start keeps its 16-byte vectors through axis_info's rule for min).
    const bool even = ts::meta("EVEN") != 0;
    auto load_block = [&](const auto& first) {
      if (even) return ts::load(x_row + first + lanes);
      auto cols = first + lanes;
      return ts::load(x_row + cols, cols < v, kNegInf);
    };
    auto x_next = load_block(0);
    ts::for_range(0, v, BLOCK, [&](ts::Int start) {
      auto xv = x_next.template to<float>();
      x_next = load_block(even ? ts::minimum(start + BLOCK, v - BLOCK) : start + BLOCK);
      auto m_new = ts::maximum(m, ts::max(xv, 1));
      // exp(x - m) as fast_exp2f(x·log2(e) - m·log2(e)): one fma and the MUFU an element, where
      // (x - m)·log2(e) takes a subtraction and a product (the same SASS count: 135 -> 128 an
      // iteration, before the EVEN loop above).
      // No subnormal handling: every group's sum holds its maximum's exp(0) = 1 beside terms below
      // 2^-126 that it would not change.
      auto m_log2 = m_new * ts::kLog2e;
      s = s * ts::fast_exp2f((m - m_new) * ts::kLog2e) + ts::sum(ts::fast_exp2f(ts::fma(xv, ts::kLog2e, -m_log2.col())), 1);
      m = m_new;
    });
    auto row_max = ts::max(m, 0);
    auto lse = row_max + ts::log(ts::sum(s * ts::exp(m - row_max), 0));
    auto row_loss = ts::where(in_range, lse - x_t, std::numeric_limits<float>::quiet_NaN());
    ts::store(loss + row, ts::where(t == ignore_index, 0.0f, row_loss));
    ts::store(lse_out + row, lse);
  });
}

// The mean of cross_entropy_fwd's per-row losses over the rows whose target is not ignore_index,
// and that count (f32), in one program of BLOCK rows a step: one launch where torch's ops took
// five (ne, sum, to, sum, div: about 30 us of a 205 us forward at 8192 x 32768 fp16 on an H100,
// whose kernel alone ran 174 us under ncu). One program sums in one fixed order, so the loss is
// the same from run to run. An ignored row's loss is 0 already; the mean of no counted row is NaN
// (0 / 0), as torch's.
inline auto make_cross_entropy_mean() {
  return ts::kernel(kernel_name<float>("cross_entropy_mean"), [](ts::Ptr<float> losses, ts::Ptr<std::int64_t> target,
                                                                  ts::Ptr<float> mean, ts::Ptr<float> count, ts::Int rows,
                                                                  ts::Int ignore_index) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto sum = ts::zeros<float>({BLOCK});
    auto counted = ts::zeros<float>({BLOCK});
    ts::for_range(0, rows, BLOCK, [&](ts::Int start) {
      auto r = start + ts::arange(0, BLOCK);
      auto in_rows = r < rows;
      auto t = ts::load(target + r, in_rows, 0).to<std::int32_t>();
      sum = sum + ts::load(losses + r, in_rows, 0.0f);
      counted = counted + ts::where(in_rows & (t != ignore_index), 1.0f, 0.0f);
    });
    auto n = ts::sum(counted, 0);
    ts::store(mean, ts::sum(sum, 0) / n);
    ts::store(count, n);
  });
}

// dlogits = (softmax(x) - onehot(target)) * scale, with scale = *grad_scale (the upstream gradient
// over the number of counted rows) and 0 on ignored rows.
template <class T>
auto make_cross_entropy_bwd() {
  return ts::kernel(kernel_name<T>("cross_entropy_bwd"), [](ts::Ptr<T> logits, ts::Ptr<std::int64_t> target,
                                                            ts::Ptr<float> lse, ts::Ptr<float> grad_scale,
                                                            ts::Ptr<T> dlogits, ts::Int v, ts::Int ignore_index) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto row = ts::program_id(0);
    auto t = ts::load(target + row).to<std::int32_t>();
    auto l_log2 = ts::load(lse + row) * ts::kLog2e;
    auto scale = ts::where(t == ignore_index, 0.0f, ts::load(grad_scale));
    ts::for_range(0, v, BLOCK, [&](ts::Int start) {
      auto cols = start + ts::arange(0, BLOCK);
      auto mask = row_mask(cols, v);
      auto xv = ts::load(logits + row * v + cols, mask, 0.0f).template to<float>();
      // exp(x - lse) as one fma and the MUFU (fast_exp2f, as the forward). A probability below
      // 2^-126 is 0 in f16/bf16 and noise in f32.
      auto p = ts::fast_exp2f(ts::fma(xv, ts::kLog2e, -l_log2));
      auto d = (p - (cols == t).template to<float>()) * scale;
      ts::store(dlogits + row * v + cols, d.template to<T>(), mask);
    });
  });
}

}  // namespace tessera::torch_ops

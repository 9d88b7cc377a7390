// Elementwise kernels, for one element type T (arithmetic in f32): bias+GELU over [rows, n] tiles
// (the erf form, as torch.nn.functional.gelu's default; see `gaussian`) forward and backward, and
// dropout over a flat tensor with a counter-based mask (Philox, as Triton's tl.rand4x: kept where the
// element's uniform draw is > p), which the backward pass recomputes instead of storing.
#pragma once
#include <tessera/tessera.hpp>

#include <cstdint>
#include <type_traits>

#include "dsl/torch/kernel_name.hpp"
#include "dsl/torch/row_mask.hpp"

namespace tessera::torch_ops {
namespace ts = ::tessera;

inline constexpr float kInvSqrt2 = 0.70710678118654752f, kInvSqrt2Pi = 0.39894228040143268f;

// The [BLOCK_M, BLOCK_N] tile of x ([m, n]) that program (i, j) covers, plus the bias by column
// (no per-element division by the row length): its offsets, mask and x + bias in f32. Meta
// EVEN_M / EVEN_N (m a multiple of BLOCK_M, n of BLOCK_N) fold the mask's halves (row_mask.hpp).
struct BiasedTile {
  ts::Tile<std::int32_t> offs;
  ts::Tile<bool> mask;
  ts::Tile<float> z;
};

template <class T>
BiasedTile biased_tile(ts::Ptr<T> x, ts::Ptr<T> bias, ts::Int m, ts::Int n) {
  const int BM = static_cast<int>(ts::meta("BLOCK_M")), BN = static_cast<int>(ts::meta("BLOCK_N"));
  auto rows = ts::program_id(0) * BM + ts::arange(0, BM);
  auto cols = ts::program_id(1) * BN + ts::arange(0, BN);
  auto col_mask = in_bounds(cols, n, BN, "EVEN_N");
  auto mask = in_bounds(rows, m, BM, "EVEN_M").col() && col_mask.row();
  auto offs = rows.col() * n + cols.row();
  auto z = ts::load(x + offs, mask, 0.0f).template to<float>() +
           ts::load(bias + cols, col_mask, 0.0f).template to<float>().row();
  return {offs, mask, z};
}

// Phi(z) = (1 + erf(z / sqrt 2)) / 2, and e = exp(-z^2 / 2) (the normal density without its
// 1/sqrt(2 pi)). f32 results take libdevice's erff (ts::erf). f16/bf16 results take
// erfc(x) = P(t)·exp(-x^2), t = 1 / (1 + p x), x = |z| / sqrt 2, the polynomial form of Abramowitz &
// Stegun 7.1.26 (|error| <= 1.5e-7 in erf, below a thousandth of an f16 ulp of the result): about
// half the instructions of erff, no branch, and its exponential is the density the backward pass
// needs anyway. Phi is 1 - erfc(x)/2 for z >= 0 and erfc(x)/2 below, so the left tail keeps its
// relative accuracy. On the H200 these kernels are bound by instructions, not bytes (Nsight
// Compute there, session 13: not_selected and math_pipe_throttle stalls; notes/training.md), so
// the arithmetic is arranged for fewer of them (sm_90a SASS for 16 elements, forward / backward:
// 520 / 672 at first, 424 / 576 with fast_dividef and fast_expf, 344 / 496 in this form with
// fast_dividef's div.approx.ftz):
// - x is never formed: 1 + p x is an fma on |z| with p / sqrt 2 (|z| is free in the fma), and
//   exp(-x^2) = exp2(z·z·(-log2(e) / 2)), whose exp2 needs no scaling of its own;
// - the coefficients are halved, so that the polynomial gives erfc / 2 and Phi needs no 0.5;
// - the reciprocal and the exponential take their fast forms (fast_dividef, fast_exp2f: within
//   2 ulp, without range and subnormal handling): 1 + p x >= 1, and an exp below 2^-126 is 0 to
//   f16/bf16 anyway.
struct Gaussian {
  ts::Tile<float> cdf, e;  // Phi(z), exp(-z^2 / 2)
};
template <class T>
Gaussian gaussian(const ts::Tile<float>& z) {
  if constexpr (std::is_same_v<T, float>) {
    return {0.5f + 0.5f * ts::erf(z * kInvSqrt2), ts::exp(-0.5f * z * z)};
  } else {
    constexpr float p = 0.3275911f * kInvSqrt2, a1 = 0.5f * 0.254829592f, a2 = 0.5f * -0.284496736f,
                    a3 = 0.5f * 1.421413741f, a4 = 0.5f * -1.453152027f, a5 = 0.5f * 1.061405429f;
    constexpr float kHalfLog2e = 0.5f * ts::kLog2e;
    auto t = ts::fast_dividef(1.0f, 1.0f + p * ts::abs(z));  // 0 where 1 + p x > 2^126: so is erfc's product
    auto e = ts::fast_exp2f(z * z * -kHalfLog2e);
    auto half_erfc = t * (a1 + t * (a2 + t * (a3 + t * (a4 + t * a5)))) * e;
    return {ts::where(z >= 0.0f, 1.0f - half_erfc, half_erfc), e};
  }
}

// y = gelu(x + bias) = z·Phi(z), x viewed as [m, n] and bias as [n].
template <class T>
auto make_bias_gelu_fwd() {
  return ts::kernel(kernel_name<T>("bias_gelu_fwd"), [](ts::Ptr<T> x, ts::Ptr<T> bias, ts::Ptr<T> y, ts::Int m,
                                                        ts::Int n) {
    auto [offs, mask, z] = biased_tile(x, bias, m, n);
    ts::store(y + offs, (z * gaussian<T>(z).cdf).template to<T>(), mask);
  });
}

// dx = dy * gelu'(x + bias), gelu'(z) = Phi(z) + z * phi(z), and each program's partial dbias
// (dx's column sums over its rows; column_sum.hpp adds the programs' rows), so that dbias costs no
// second pass over dx. Program (p, j) takes the row blocks p, p + P, ... (P = num_programs(0)) of
// column block j and keeps their dx in an f32 [BLOCK_M, BLOCK_N] accumulator, reduced once at the end.
template <class T>
auto make_bias_gelu_bwd() {
  return ts::kernel(kernel_name<T>("bias_gelu_bwd"), [](ts::Ptr<T> x, ts::Ptr<T> bias, ts::Ptr<T> dy, ts::Ptr<T> dx,
                                                        ts::Ptr<float> dbias_partial, ts::Int m, ts::Int n) {
    const int BM = static_cast<int>(ts::meta("BLOCK_M")), BN = static_cast<int>(ts::meta("BLOCK_N"));
    auto cols = ts::program_id(1) * BN + ts::arange(0, BN);
    auto col_mask = in_bounds(cols, n, BN, "EVEN_N");
    auto bv = ts::load(bias + cols, col_mask, 0.0f).template to<float>().row();
    auto acc = ts::zeros<float>({BM, BN});
    ts::for_range(ts::program_id(0) * BM, m, ts::num_programs(0) * BM, [&](ts::Int first_row) {
      auto rows = first_row + ts::arange(0, BM);
      auto mask = in_bounds(rows, m, BM, "EVEN_M").col() && col_mask.row();  // first_row + BM <= m where EVEN_M
      auto offs = rows.col() * n + cols.row();
      auto z = ts::load(x + offs, mask, 0.0f).template to<float>() + bv;
      auto g = ts::load(dy + offs, mask, 0.0f).template to<float>();
      auto [cdf, e] = gaussian<T>(z);
      auto d = g * (cdf + z * kInvSqrt2Pi * e);  // 0 where masked: g loaded 0
      ts::store(dx + offs, d.template to<T>(), mask);
      acc = acc + d;
    });
    ts::store(dbias_partial + ts::program_id(0) * n + cols, ts::sum(acc, 0), col_mask);
  });
}

// Elements per dropout program. The mask is a function of (seed, element index) only because this
// is fixed: program p draws rand4x(seed, p * BLOCK/4 + j) and gives its k-th output to element
// p * BLOCK + k * BLOCK/4 + j (one Philox evaluation per four elements, as PyTorch's own dropout).
inline constexpr std::int64_t kDropoutBlock = 4096;

// y = x * scale where the element's uniform draw is > p, else 0 (scale = 1 / (1 - p)). The draw is
// Triton's uint_to_uniform_float(w) = m * 2^-31 in f32, m = w as int32 with negatives folded
// (~w); it is > p exactly when m >= keep_from (dropout_keep_from: the map is monotone, so the
// host finds that bound once), which the kernel tests on the integer word itself: w >= keep_from,
// or ~w >= keep_from, that is w <= ~keep_from. Two integer compares instead of the fold, the
// conversion, the product and a float compare; with the select ahead of the scaling (so that the
// f16 conversion packs pairs) 816 -> 720 SASS instructions for 32 elements (sm_90a), the rest
// mostly Philox's rounds. On the H200 this kernel ran at 0.84 of copy bandwidth where the H100
// (less bandwidth per instruction) reached 0.97 (notes/training.md): bound by instructions there.
template <class T>
auto make_dropout() {
  return ts::kernel(kernel_name<T>("dropout"), [](ts::Ptr<T> x, ts::Ptr<T> y, ts::Int numel, ts::Int keep_from,
                                                  ts::Float scale, ts::Int64 seed) {
    constexpr int kQuarter = static_cast<int>(kDropoutBlock / 4);
    auto pid = ts::program_id(0);
    auto j = ts::arange(0, kQuarter);
    auto words = ts::randint4x(seed, pid * kQuarter + j);
    for (int k = 0; k < 4; ++k) {
      auto w = words[k].template to<std::int32_t>();
      auto kept = (w >= keep_from) || (w <= ~keep_from);
      auto offs = pid * static_cast<int>(kDropoutBlock) + k * kQuarter + j;
      auto mask = in_bounds(offs, numel, kQuarter, "EVEN");  // EVEN: numel a multiple of the block
      auto v = ts::load(x + offs, mask, 0.0f).template to<float>();
      ts::store(y + offs, (ts::where(kept, v, 0.0f) * scale).template to<T>(), mask);
    }
  });
}

}  // namespace tessera::torch_ops

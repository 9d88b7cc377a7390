// Elementwise kernels over a flat tensor, for one element type T (arithmetic in f32): bias+GELU
// (the exact, erf form, as torch.nn.functional.gelu's default) forward and backward, and dropout
// with a counter-based mask (Philox, as Triton's tl.rand: element i is kept when
// rand(seed, i) > p), which the backward pass recomputes instead of storing.
#pragma once
#include <tessera/tessera.hpp>

#include <cstdint>

#include "dsl/torch/kernel_name.hpp"

namespace tessera::torch_ops {
namespace ts = ::tessera;

inline constexpr float kInvSqrt2 = 0.70710678118654752f, kInvSqrt2Pi = 0.39894228040143268f;

// y = gelu(x + bias), x viewed as [numel / n, n] and bias as [n].
template <class T>
auto make_bias_gelu_fwd() {
  return ts::kernel(kernel_name<T>("bias_gelu_fwd"), [](ts::Ptr<T> x, ts::Ptr<T> bias, ts::Ptr<T> y, ts::Int numel,
                                                        ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < numel;
    auto z = ts::load(x + offs, mask, 0.0f).template to<float>() +
             ts::load(bias + offs % n, mask, 0.0f).template to<float>();
    ts::store(y + offs, (0.5f * z * (1.0f + ts::erf(z * kInvSqrt2))).template to<T>(), mask);
  });
}

// dx = dy * gelu'(x + bias), gelu'(z) = Phi(z) + z * phi(z).
template <class T>
auto make_bias_gelu_bwd() {
  return ts::kernel(kernel_name<T>("bias_gelu_bwd"), [](ts::Ptr<T> x, ts::Ptr<T> bias, ts::Ptr<T> dy, ts::Ptr<T> dx,
                                                        ts::Int numel, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < numel;
    auto z = ts::load(x + offs, mask, 0.0f).template to<float>() +
             ts::load(bias + offs % n, mask, 0.0f).template to<float>();
    auto cdf = 0.5f * (1.0f + ts::erf(z * kInvSqrt2));
    auto pdf = ts::exp(-0.5f * z * z) * kInvSqrt2Pi;
    auto g = ts::load(dy + offs, mask, 0.0f).template to<float>();
    ts::store(dx + offs, (g * (cdf + z * pdf)).template to<T>(), mask);
  });
}

// y = x * scale where rand(seed, i) > p, else 0 (scale = 1 / (1 - p)).
template <class T>
auto make_dropout() {
  return ts::kernel(kernel_name<T>("dropout"), [](ts::Ptr<T> x, ts::Ptr<T> y, ts::Int numel, ts::Float p,
                                                  ts::Float scale, ts::Int64 seed) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < numel;
    auto keep = ts::rand(seed, offs) > p;
    auto v = ts::load(x + offs, mask, 0.0f).template to<float>();
    ts::store(y + offs, ts::where(keep, v * scale, 0.0f).template to<T>(), mask);
  });
}

}  // namespace tessera::torch_ops

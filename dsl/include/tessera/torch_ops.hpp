// tessera's PyTorch ops from C++ (libtorch): the ops that libtessera_torch.so registers in the
// `tessera` namespace (torch.ops.tessera.* in Python), called through PyTorch's dispatcher, so
// that autograd, torch.compile's fake tensors and PyTorch's current CUDA stream all apply.
// Link the tessera::torch CMake target (find_package(tessera COMPONENTS torch)).
//
//   at::Tensor y = tessera::torch::layer_norm(x, weight, bias);   // differentiable
//   at::Tensor loss = tessera::torch::cross_entropy(logits, target);
//
// Tensors may be CPU (run on tessera's interpreter: for tests, slow) or CUDA (run on that GPU).
// Each op normalizes, or applies softmax, over the last dimension; inputs are made contiguous
// (matmul takes any strides).
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <optional>

#include "tessera/export.hpp"

namespace tessera::torch {

// (x - mean) / sqrt(var + eps) * weight + bias over the last dimension (weight, bias: [N]).
TESSERA_API at::Tensor layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                  double eps = 1e-5);
// x / sqrt(mean(x^2) + eps) * weight over the last dimension (weight: [N]).
TESSERA_API at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps = 1e-6);
// softmax over `dim`, which must be the last dimension.
TESSERA_API at::Tensor softmax(const at::Tensor& x, std::int64_t dim = -1);
// The mean cross-entropy (float32 scalar) of logits [M, V] against int64 targets [M], over the
// rows whose target is not ignore_index, fused with the log-softmax; as
// torch::nn::functional::cross_entropy on logits.float().
TESSERA_API at::Tensor cross_entropy(const at::Tensor& logits, const at::Tensor& target,
                                     std::int64_t ignore_index = -100);
// gelu(x + bias), the erf form of GELU (f16/bf16: erfc as a polynomial good to 1.5e-7), bias: [N].
TESSERA_API at::Tensor bias_gelu(const at::Tensor& x, const at::Tensor& bias);
// Keeps each element with probability 1 - p, scaled by 1 / (1 - p). The mask is a function of
// (seed, element index) (Philox, as Triton's tl.rand): the same seed gives the same mask, so pass
// a new seed per call (e.g. from the step number).
TESSERA_API at::Tensor dropout(const at::Tensor& x, double p, std::int64_t seed);

// a·b for 2-D a [M, K] and b [K, N] of one float dtype (any strides), on tensor cores on NVIDIA
// GPUs; float32 uses TF32 only where PyTorch's torch.backends.cuda.matmul.allow_tf32 says so.
TESSERA_API at::Tensor matmul(const at::Tensor& a, const at::Tensor& b);

// softmax(q·kᵀ·scale)·v over q, k, v of one shape [..., n, head_dim] (the leading dimensions are
// batch and heads), float16 or bfloat16, head_dim a power of two from 16 to 128; with causal, key
// j is seen by query i only if j <= i. scale defaults to 1 / sqrt(head_dim), as
// torch's scaled_dot_product_attention. FlashAttention-2's forward and backward.
TESSERA_API at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal = false,
                                 std::optional<double> scale = std::nullopt);

}  // namespace tessera::torch

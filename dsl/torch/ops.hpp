// The kernels behind the tessera::* PyTorch ops, one pair (device, meta) per internal op; the
// device kernel serves CPU tensors (interpreter) and CUDA tensors alike, since a tessera launch
// follows its tensors. library.cpp registers them; autograd.cpp builds the public ops on them.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <tuple>

namespace tessera::torch_ops {

// layer_norm_fwd -> (y, mean, rstd); layer_norm_bwd(dy, x, w, mean, rstd) -> (dx, dw, db).
std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_fwd(const at::Tensor& x, const at::Tensor& w,
                                                             const at::Tensor& b, double eps);
std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_bwd(const at::Tensor& dy, const at::Tensor& x,
                                                             const at::Tensor& w, const at::Tensor& mean,
                                                             const at::Tensor& rstd);
std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_fwd_meta(const at::Tensor& x, const at::Tensor& w,
                                                                  const at::Tensor& b, double eps);
std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_bwd_meta(const at::Tensor& dy, const at::Tensor& x,
                                                                  const at::Tensor& w, const at::Tensor& mean,
                                                                  const at::Tensor& rstd);

// rms_norm_fwd -> (y, rstd); rms_norm_bwd(dy, x, w, rstd) -> (dx, dw).
std::tuple<at::Tensor, at::Tensor> rms_norm_fwd(const at::Tensor& x, const at::Tensor& w, double eps);
std::tuple<at::Tensor, at::Tensor> rms_norm_bwd(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w,
                                                const at::Tensor& rstd);
std::tuple<at::Tensor, at::Tensor> rms_norm_fwd_meta(const at::Tensor& x, const at::Tensor& w, double eps);
std::tuple<at::Tensor, at::Tensor> rms_norm_bwd_meta(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& w,
                                                     const at::Tensor& rstd);

// softmax_fwd(x, dim) -> y; softmax_bwd(dy, y, dim) -> dx.
at::Tensor softmax_fwd(const at::Tensor& x, std::int64_t dim);
at::Tensor softmax_bwd(const at::Tensor& dy, const at::Tensor& y, std::int64_t dim);
at::Tensor softmax_fwd_meta(const at::Tensor& x, std::int64_t dim);
at::Tensor softmax_bwd_meta(const at::Tensor& dy, const at::Tensor& y, std::int64_t dim);

// cross_entropy_fwd(logits, target, ignore_index) -> (loss per row, lse per row), both f32;
// cross_entropy_bwd(grad_scale, logits, target, lse, ignore_index) -> dlogits.
std::tuple<at::Tensor, at::Tensor> cross_entropy_fwd(const at::Tensor& logits, const at::Tensor& target,
                                                     std::int64_t ignore_index);
at::Tensor cross_entropy_bwd(const at::Tensor& grad_scale, const at::Tensor& logits, const at::Tensor& target,
                             const at::Tensor& lse, std::int64_t ignore_index);
// cross_entropy_mean(losses, target, ignore_index) -> (mean of the losses over the rows whose
// target is not ignore_index, that count), both 0-dim f32: the forward's reduction in one launch.
std::tuple<at::Tensor, at::Tensor> cross_entropy_mean(const at::Tensor& losses, const at::Tensor& target,
                                                      std::int64_t ignore_index);
std::tuple<at::Tensor, at::Tensor> cross_entropy_mean_meta(const at::Tensor& losses, const at::Tensor& target,
                                                           std::int64_t ignore_index);
std::tuple<at::Tensor, at::Tensor> cross_entropy_fwd_meta(const at::Tensor& logits, const at::Tensor& target,
                                                          std::int64_t ignore_index);
at::Tensor cross_entropy_bwd_meta(const at::Tensor& grad_scale, const at::Tensor& logits, const at::Tensor& target,
                                  const at::Tensor& lse, std::int64_t ignore_index);

// bias_gelu_fwd(x, bias) -> y; bias_gelu_bwd(dy, x, bias) -> (dx, dbias), dbias = dx's column sums.
at::Tensor bias_gelu_fwd(const at::Tensor& x, const at::Tensor& bias);
std::tuple<at::Tensor, at::Tensor> bias_gelu_bwd(const at::Tensor& dy, const at::Tensor& x, const at::Tensor& bias);
at::Tensor bias_gelu_fwd_meta(const at::Tensor& x, const at::Tensor& bias);
std::tuple<at::Tensor, at::Tensor> bias_gelu_bwd_meta(const at::Tensor& dy, const at::Tensor& x,
                                                      const at::Tensor& bias);

// dropout(x, p, seed) -> y: its own backward (the same mask and scale applied to dy).
at::Tensor dropout(const at::Tensor& x, double p, std::int64_t seed);
at::Tensor dropout_meta(const at::Tensor& x, double p, std::int64_t seed);

// matmul_fwd(a [M, K], b [K, N]) -> a·b [M, N]; the backward pass is two more of it.
at::Tensor matmul_fwd(const at::Tensor& a, const at::Tensor& b);
at::Tensor matmul_fwd_meta(const at::Tensor& a, const at::Tensor& b);

// attention_fwd(q, k, v, causal, scale) -> (o, lse [..., n] f32); attention_bwd(do, q, k, v, o, lse,
// causal, scale) -> (dq, dk, dv). q, k, v: [..., n, head_dim], f16 or bf16.
std::tuple<at::Tensor, at::Tensor> attention_fwd(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                 bool causal, double scale);
std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_bwd(const at::Tensor& d_o, const at::Tensor& q,
                                                             const at::Tensor& k, const at::Tensor& v,
                                                             const at::Tensor& o, const at::Tensor& lse, bool causal,
                                                             double scale);
std::tuple<at::Tensor, at::Tensor> attention_fwd_meta(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                      bool causal, double scale);
std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_bwd_meta(const at::Tensor& d_o, const at::Tensor& q,
                                                                  const at::Tensor& k, const at::Tensor& v,
                                                                  const at::Tensor& o, const at::Tensor& lse,
                                                                  bool causal, double scale);

// The public ops, differentiable: the Autograd kernels and the kernels below autograd
// (CompositeExplicitAutograd: they call the internal ops above through the dispatcher).
at::Tensor layer_norm_autograd(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double eps);
at::Tensor layer_norm_plain(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double eps);
at::Tensor rms_norm_autograd(const at::Tensor& x, const at::Tensor& w, double eps);
at::Tensor rms_norm_plain(const at::Tensor& x, const at::Tensor& w, double eps);
at::Tensor softmax_autograd(const at::Tensor& x, std::int64_t dim);
at::Tensor softmax_plain(const at::Tensor& x, std::int64_t dim);
at::Tensor cross_entropy_autograd(const at::Tensor& logits, const at::Tensor& target, std::int64_t ignore_index);
at::Tensor cross_entropy_plain(const at::Tensor& logits, const at::Tensor& target, std::int64_t ignore_index);
at::Tensor bias_gelu_autograd(const at::Tensor& x, const at::Tensor& bias);
at::Tensor bias_gelu_plain(const at::Tensor& x, const at::Tensor& bias);
at::Tensor dropout_autograd(const at::Tensor& x, double p, std::int64_t seed);
at::Tensor matmul_autograd(const at::Tensor& a, const at::Tensor& b);
at::Tensor matmul_plain(const at::Tensor& a, const at::Tensor& b);
at::Tensor attention_autograd(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal,
                              c10::optional<double> scale);
at::Tensor attention_plain(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal,
                           c10::optional<double> scale);

}  // namespace tessera::torch_ops

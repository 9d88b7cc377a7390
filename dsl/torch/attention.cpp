// tessera::attention_fwd/bwd: scaled dot-product attention over [..., n, head_dim] tensors (the
// leading dimensions are heads), through the kernels of examples/attention_kernels.hpp
// (FlashAttention-2's forward, which also writes each row's log-sum-exp, and its backward: delta,
// dK/dV, dQ), and their meta kernels. The autograd op that uses them is in autograd.cpp.
#include <cmath>
#include <limits>

#include "dsl/torch/common.hpp"
#include "dsl/torch/kernel_name.hpp"
#include "dsl/torch/ops.hpp"
#include "examples/attention_kernels.hpp"

namespace tessera::torch_ops {
namespace {
namespace ex = ::tessera_examples;

// q, k and v of one shape [..., n, head_dim] (self-attention of one sequence length; no grouped
// heads yet), f16 or bf16 (the kernels' dots take 16-bit operands), head_dim a power of two from
// 16 to 128, 32-bit offsets.
void check_attention_inputs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, std::string_view op) {
  TORCH_CHECK(q.dim() >= 2, "tessera::", op, ": q must be [..., n, head_dim], got shape ", q.sizes());
  TORCH_CHECK(q.scalar_type() == at::kHalf || q.scalar_type() == at::kBFloat16, "tessera::", op,
              ": q must be float16 or bfloat16 (tensor cores take 16-bit operands here), got ", q.scalar_type());
  for (const auto& [t, name] : {std::pair{&k, "k"}, std::pair{&v, "v"}}) {
    check_same_dtype(q, *t, op, name);
    check_same_device(q, *t, op, name);
    TORCH_CHECK(t->sizes() == q.sizes(), "tessera::", op, ": ", name, " has shape ", t->sizes(), " but q has ",
                q.sizes(), " (one sequence length and head count for q, k and v)");
  }
  const std::int64_t d = q.size(-1);
  TORCH_CHECK(d >= 16 && d <= 128 && (d & (d - 1)) == 0, "tessera::", op,
              ": head_dim must be a power of two from 16 to 128, got ", d);
  TORCH_CHECK(q.numel() < std::numeric_limits<std::int32_t>::max(), "tessera::", op, ": ", q.numel(),
              " elements per tensor (2^31 or more) is not supported (the kernels use 32-bit offsets)");
}

struct AttentionShape {
  std::int64_t heads, n, d;
};
AttentionShape attention_shape(const at::Tensor& q) {
  const std::int64_t n = q.size(-2), d = q.size(-1);
  return {n == 0 ? 0 : q.numel() / (n * d), n, d};
}

// Calls f(T{}) with T the tessera element type of a 16-bit dtype.
template <class F>
void dispatch_16bit(at::ScalarType dtype, F&& f) {
  if (dtype == at::kHalf) f(ts::half{});
  else f(ts::bfloat16{});
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> attention_fwd(const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in,
                                                 bool causal, double scale) {
  check_attention_inputs(q_in, k_in, v_in, "attention");
  const at::Tensor q = q_in.contiguous(), k = k_in.contiguous(), v = v_in.contiguous();
  at::Tensor o = contiguous_like(q), lse = per_row_f32(q);
  const AttentionShape s = attention_shape(q);
  if (s.heads == 0) return {o, lse};
  dispatch_16bit(q.scalar_type(), [&]<class T>(T) {
    static auto kernel = ex::make_attention_fwd<T>(kernel_name<T>("attention_fwd").c_str());
    kernel[ts::torch::options_for(q, ex::attention_options(s.heads, s.n, s.d, causal, static_cast<float>(scale), ex::attention_config(s.d)))](
        q, k, v, o, lse, static_cast<std::int32_t>(s.n), static_cast<float>(scale));
  });
  return {o, lse};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_bwd(const at::Tensor& do_in, const at::Tensor& q_in,
                                                             const at::Tensor& k_in, const at::Tensor& v_in,
                                                             const at::Tensor& o_in, const at::Tensor& lse_in,
                                                             bool causal, double scale) {
  check_attention_inputs(q_in, k_in, v_in, "attention_backward");
  for (const auto& [t, name] : {std::pair{&do_in, "the output gradient"}, std::pair{&o_in, "the output"}}) {
    check_same_dtype(q_in, *t, "attention_backward", name);
    TORCH_CHECK(t->sizes() == q_in.sizes(), "tessera::attention_backward: ", name, " has shape ", t->sizes(),
                " but q has ", q_in.sizes());
  }
  TORCH_CHECK(lse_in.scalar_type() == at::kFloat && lse_in.numel() * q_in.size(-1) == q_in.numel(),
              "tessera::attention_backward: lse must be float32 with one value per row of q");
  const at::Tensor q = q_in.contiguous(), k = k_in.contiguous(), v = v_in.contiguous();
  const at::Tensor d_o = do_in.contiguous(), o = o_in.contiguous(), lse = lse_in.contiguous();
  at::Tensor dq = contiguous_like(q), dk = contiguous_like(k), dv = contiguous_like(v);
  const AttentionShape s = attention_shape(q);
  if (s.heads == 0) return {dq, dk, dv};
  at::Tensor delta = at::empty_like(lse);
  const ex::AttentionBackwardConfig cfg = ex::attention_bwd_config(s.d, causal, ts::target_name(executor_of(q)));
  auto options = [&](const ex::AttentionConfig& c, bool by_keys) {
    return ts::torch::options_for(q, ex::attention_bwd_options(s.heads, s.n, s.d, causal, c, by_keys));
  };
  const auto n = static_cast<std::int32_t>(s.n);
  const auto sc = static_cast<float>(scale);
  dispatch_16bit(q.scalar_type(), [&]<class T>(T) {
    static auto delta_kernel = ex::make_attention_bwd_delta<T>(kernel_name<T>("attention_bwd_delta").c_str());
    static auto dkdv = ex::make_attention_bwd_dkdv<T>(kernel_name<T>("attention_bwd_dkdv").c_str());
    static auto dq_kernel = ex::make_attention_bwd_dq<T>(kernel_name<T>("attention_bwd_dq").c_str());
    delta_kernel[options(cfg.dq, false)](o, d_o, delta, n);
    dkdv[options(cfg.dkdv, true)](q, k, v, d_o, lse, delta, dk, dv, n, sc);
    dq_kernel[options(cfg.dq, false)](q, k, v, d_o, lse, delta, dq, n, sc);
  });
  return {dq, dk, dv};
}

std::tuple<at::Tensor, at::Tensor> attention_fwd_meta(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                      bool, double) {
  check_same_dtype(q, k, "attention", "k");
  check_same_dtype(q, v, "attention", "v");
  return {contiguous_like(q), per_row_f32(q)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> attention_bwd_meta(const at::Tensor&, const at::Tensor& q,
                                                                  const at::Tensor& k, const at::Tensor& v,
                                                                  const at::Tensor&, const at::Tensor&, bool, double) {
  return {contiguous_like(q), contiguous_like(k), contiguous_like(v)};
}

}  // namespace tessera::torch_ops

// The public, differentiable ops: each an autograd Function whose forward and backward call the
// internal ops (tessera::*_fwd / *_bwd) through the dispatcher, so that the same graph runs on CPU
// and CUDA tensors, records under torch.compile (the internal ops have meta kernels) and saves
// only what the backward kernel reads. Below autograd (inference, no_grad, tracing), the plain
// kernels call the forward op alone. The backward passes are not themselves differentiable
// (no double backward): a backward run with create_graph=True is refused, and the backward op is
// called below autograd (the internal ops have no autograd kernel; PyTorch 1.13 has no fallthrough
// for them on meta tensors).
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <vector>

#include "dsl/torch/dispatch.hpp"
#include "dsl/torch/ops.hpp"

namespace tessera::torch_ops {
namespace {

using ::torch::autograd::AutogradContext;
using ::torch::autograd::variable_list;

using Tensor = at::Tensor;
using Tensor3 = std::tuple<Tensor, Tensor, Tensor>;
using Tensor2 = std::tuple<Tensor, Tensor>;

Tensor3 call_layer_norm_fwd(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  static auto h = op_handle<Tensor3(const Tensor&, const Tensor&, const Tensor&, double)>("tessera::layer_norm_fwd");
  return h.call(x, w, b, eps);
}
Tensor2 call_rms_norm_fwd(const Tensor& x, const Tensor& w, double eps) {
  static auto h = op_handle<Tensor2(const Tensor&, const Tensor&, double)>("tessera::rms_norm_fwd");
  return h.call(x, w, eps);
}
Tensor call_softmax_fwd(const Tensor& x, std::int64_t dim) {
  static auto h = op_handle<Tensor(const Tensor&, std::int64_t)>("tessera::softmax_fwd");
  return h.call(x, dim);
}
Tensor2 call_cross_entropy_fwd(const Tensor& logits, const Tensor& target, std::int64_t ignore_index) {
  static auto h = op_handle<Tensor2(const Tensor&, const Tensor&, std::int64_t)>("tessera::cross_entropy_fwd");
  return h.call(logits, target, ignore_index);
}
Tensor call_bias_gelu_fwd(const Tensor& x, const Tensor& bias) {
  static auto h = op_handle<Tensor(const Tensor&, const Tensor&)>("tessera::bias_gelu_fwd");
  return h.call(x, bias);
}
Tensor call_matmul_fwd(const Tensor& a, const Tensor& b) {
  static auto h = op_handle<Tensor(const Tensor&, const Tensor&)>("tessera::matmul_fwd");
  return h.call(a, b);
}
Tensor call_dropout(const Tensor& x, double p, std::int64_t seed) {
  static auto h = op_handle<Tensor(const Tensor&, double, std::int64_t)>("tessera::dropout");
  return h.call(x, p, seed);
}

void refuse_double_backward(const char* name) {
  TORCH_CHECK(!at::GradMode::is_enabled(), "tessera::", name,
              ": the backward pass is not differentiable (no double backward); run it without create_graph=True");
}

// The mean of the per-row losses over the rows whose target is not ignore_index, and that count
// (float32, so that no value is read back to the host): one tessera launch (cross_entropy_mean).
Tensor2 mean_over_counted(const Tensor& losses, const Tensor& target, std::int64_t ignore_index) {
  static auto h = op_handle<Tensor2(const Tensor&, const Tensor&, std::int64_t)>("tessera::cross_entropy_mean");
  return h.call(losses, target, ignore_index);
}

struct LayerNormFn : ::torch::autograd::Function<LayerNormFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [y, mean, rstd] = call_layer_norm_fwd(x, w, b, eps);
    ctx->save_for_backward({x, w, mean, rstd});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    refuse_double_backward("layer_norm");
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto h = op_handle<Tensor3(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&)>(
        "tessera::layer_norm_bwd");
    const auto s = ctx->get_saved_variables();
    auto [dx, dw, db] = h.call(grads[0], s[0], s[1], s[2], s[3]);
    return {dx, dw, db, Tensor()};
  }
};

struct RmsNormFn : ::torch::autograd::Function<RmsNormFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& w, double eps) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [y, rstd] = call_rms_norm_fwd(x, w, eps);
    ctx->save_for_backward({x, w, rstd});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    refuse_double_backward("rms_norm");
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto h = op_handle<Tensor2(const Tensor&, const Tensor&, const Tensor&, const Tensor&)>("tessera::rms_norm_bwd");
    const auto s = ctx->get_saved_variables();
    auto [dx, dw] = h.call(grads[0], s[0], s[1], s[2]);
    return {dx, dw, Tensor()};
  }
};

struct SoftmaxFn : ::torch::autograd::Function<SoftmaxFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, std::int64_t dim) {
    at::AutoDispatchBelowADInplaceOrView guard;
    Tensor y = call_softmax_fwd(x, dim);
    ctx->save_for_backward({y});
    ctx->saved_data["dim"] = dim;
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    refuse_double_backward("softmax");
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto h = op_handle<Tensor(const Tensor&, const Tensor&, std::int64_t)>("tessera::softmax_bwd");
    const auto s = ctx->get_saved_variables();
    return {h.call(grads[0], s[0], ctx->saved_data["dim"].toInt()), Tensor()};
  }
};

struct CrossEntropyFn : ::torch::autograd::Function<CrossEntropyFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& logits, const Tensor& target, std::int64_t ignore_index) {
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [losses, lse] = call_cross_entropy_fwd(logits, target, ignore_index);
    auto [mean, count] = mean_over_counted(losses, target, ignore_index);
    ctx->save_for_backward({logits, target, lse, count});
    ctx->saved_data["ignore_index"] = ignore_index;
    return mean;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    refuse_double_backward("cross_entropy");
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto h = op_handle<Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&, std::int64_t)>(
        "tessera::cross_entropy_bwd");
    const auto s = ctx->get_saved_variables();
    const Tensor grad_scale = grads[0].to(at::kFloat) / s[3];
    return {h.call(grad_scale, s[0], s[1], s[2], ctx->saved_data["ignore_index"].toInt()), Tensor(), Tensor()};
  }
};

struct BiasGeluFn : ::torch::autograd::Function<BiasGeluFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& bias) {
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({x, bias});
    return call_bias_gelu_fwd(x, bias);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    refuse_double_backward("bias_gelu");
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto h = op_handle<Tensor2(const Tensor&, const Tensor&, const Tensor&)>("tessera::bias_gelu_bwd");
    const auto s = ctx->get_saved_variables();
    auto [dx, dbias] = h.call(grads[0], s[0], s[1]);
    return {dx, dbias};
  }
};

struct DropoutFn : ::torch::autograd::Function<DropoutFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, double p, std::int64_t seed) {
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->saved_data["p"] = p;
    ctx->saved_data["seed"] = seed;
    return call_dropout(x, p, seed);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    refuse_double_backward("dropout");
    at::AutoDispatchBelowADInplaceOrView guard;
    // The mask is a function of (seed, element index): the same op on dy applies it again.
    return {call_dropout(grads[0], ctx->saved_data["p"].toDouble(), ctx->saved_data["seed"].toInt()), Tensor(),
            Tensor()};
  }
};

// dA = dC·Bᵀ and dB = Aᵀ·dC, each one more matmul over transposed views (the kernel takes any
// strides: nothing is copied), computed only for the inputs that need a gradient.
struct MatmulFn : ::torch::autograd::Function<MatmulFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& a, const Tensor& b) {
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({a, b});
    return call_matmul_fwd(a, b);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    refuse_double_backward("matmul");
    at::AutoDispatchBelowADInplaceOrView guard;
    const auto s = ctx->get_saved_variables();
    Tensor da = ctx->needs_input_grad(0) ? call_matmul_fwd(grads[0], s[1].t()) : Tensor();
    Tensor db = ctx->needs_input_grad(1) ? call_matmul_fwd(s[0].t(), grads[0]) : Tensor();
    return {da, db};
  }
};

Tensor2 call_attention_fwd(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, double scale) {
  static auto h = op_handle<Tensor2(const Tensor&, const Tensor&, const Tensor&, bool, double)>("tessera::attention_fwd");
  return h.call(q, k, v, causal, scale);
}

// softmax(q·kᵀ·scale)·v's default scale: 1 / sqrt(head_dim), as torch's scaled_dot_product_attention.
double attention_scale(const Tensor& q, c10::optional<double> scale) {
  return scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
}

struct AttentionFn : ::torch::autograd::Function<AttentionFn> {
  static Tensor forward(AutogradContext* ctx, const Tensor& q, const Tensor& k, const Tensor& v, bool causal,
                        c10::optional<double> scale) {
    at::AutoDispatchBelowADInplaceOrView guard;
    const double sc = attention_scale(q, scale);
    auto [o, lse] = call_attention_fwd(q, k, v, causal, sc);
    ctx->save_for_backward({q, k, v, o, lse});
    ctx->saved_data["causal"] = causal;
    ctx->saved_data["scale"] = sc;
    return o;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    refuse_double_backward("attention");
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto h = op_handle<Tensor3(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                      const Tensor&, bool, double)>("tessera::attention_bwd");
    const auto s = ctx->get_saved_variables();
    auto [dq, dk, dv] = h.call(grads[0], s[0], s[1], s[2], s[3], s[4], ctx->saved_data["causal"].toBool(),
                               ctx->saved_data["scale"].toDouble());
    return {dq, dk, dv, Tensor(), Tensor()};
  }
};

}  // namespace

Tensor attention_autograd(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, c10::optional<double> scale) {
  return AttentionFn::apply(q, k, v, causal, scale);
}
Tensor attention_plain(const Tensor& q, const Tensor& k, const Tensor& v, bool causal, c10::optional<double> scale) {
  return std::get<0>(call_attention_fwd(q, k, v, causal, attention_scale(q, scale)));
}

Tensor matmul_autograd(const Tensor& a, const Tensor& b) { return MatmulFn::apply(a, b); }
Tensor matmul_plain(const Tensor& a, const Tensor& b) { return call_matmul_fwd(a, b); }

Tensor layer_norm_autograd(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  return LayerNormFn::apply(x, w, b, eps);
}
Tensor layer_norm_plain(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  return std::get<0>(call_layer_norm_fwd(x, w, b, eps));
}
Tensor rms_norm_autograd(const Tensor& x, const Tensor& w, double eps) { return RmsNormFn::apply(x, w, eps); }
Tensor rms_norm_plain(const Tensor& x, const Tensor& w, double eps) { return std::get<0>(call_rms_norm_fwd(x, w, eps)); }
Tensor softmax_autograd(const Tensor& x, std::int64_t dim) { return SoftmaxFn::apply(x, dim); }
Tensor softmax_plain(const Tensor& x, std::int64_t dim) { return call_softmax_fwd(x, dim); }
Tensor cross_entropy_autograd(const Tensor& logits, const Tensor& target, std::int64_t ignore_index) {
  return CrossEntropyFn::apply(logits, target, ignore_index);
}
Tensor cross_entropy_plain(const Tensor& logits, const Tensor& target, std::int64_t ignore_index) {
  auto [losses, lse] = call_cross_entropy_fwd(logits, target, ignore_index);
  return std::get<0>(mean_over_counted(losses, target, ignore_index));
}
Tensor bias_gelu_autograd(const Tensor& x, const Tensor& bias) { return BiasGeluFn::apply(x, bias); }
Tensor bias_gelu_plain(const Tensor& x, const Tensor& bias) { return call_bias_gelu_fwd(x, bias); }
Tensor dropout_autograd(const Tensor& x, double p, std::int64_t seed) { return DropoutFn::apply(x, p, seed); }

}  // namespace tessera::torch_ops

// tessera/torch_ops.hpp: the C++ entry points, each a call of the registered op through
// PyTorch's dispatcher (so that autograd and the current stream apply as from Python).
#include <tessera/torch_ops.hpp>

#include "dsl/torch/dispatch.hpp"

namespace tessera::torch {
namespace {

using T = const at::Tensor&;
using torch_ops::op_handle;

}  // namespace

at::Tensor layer_norm(T x, T weight, T bias, double eps) {
  static auto h = op_handle<at::Tensor(T, T, T, double)>("tessera::layer_norm");
  return h.call(x, weight, bias, eps);
}

at::Tensor rms_norm(T x, T weight, double eps) {
  static auto h = op_handle<at::Tensor(T, T, double)>("tessera::rms_norm");
  return h.call(x, weight, eps);
}

at::Tensor softmax(T x, std::int64_t dim) {
  static auto h = op_handle<at::Tensor(T, std::int64_t)>("tessera::softmax");
  return h.call(x, dim);
}

at::Tensor cross_entropy(T logits, T target, std::int64_t ignore_index) {
  static auto h = op_handle<at::Tensor(T, T, std::int64_t)>("tessera::cross_entropy");
  return h.call(logits, target, ignore_index);
}

at::Tensor bias_gelu(T x, T bias) {
  static auto h = op_handle<at::Tensor(T, T)>("tessera::bias_gelu");
  return h.call(x, bias);
}

at::Tensor dropout(T x, double p, std::int64_t seed) {
  static auto h = op_handle<at::Tensor(T, double, std::int64_t)>("tessera::dropout");
  return h.call(x, p, seed);
}

at::Tensor matmul(T a, T b) {
  static auto h = op_handle<at::Tensor(T, T)>("tessera::matmul");
  return h.call(a, b);
}

at::Tensor attention(T q, T k, T v, bool causal, std::optional<double> scale) {
  static auto h = op_handle<at::Tensor(T, T, T, bool, c10::optional<double>)>("tessera::attention");
  return h.call(q, k, v, causal, scale.has_value() ? c10::optional<double>(*scale) : c10::nullopt);
}

}  // namespace tessera::torch

// tessera::bias_gelu_fwd/bwd and tessera::dropout: device kernels and meta kernels.
#include "dsl/torch/common.hpp"
#include "dsl/torch/ops.hpp"
#include "dsl/torch/pointwise_kernels.hpp"

#include <algorithm>

namespace tessera::torch_ops {
namespace {

// bias+GELU tiles: 2048 elements (16 per thread of 4 warps), up to 1024 columns wide; the bias is
// indexed by column, so no element needs a division by the row length.
ts::LaunchOptions bias_gelu_options(const at::Tensor& x, std::int64_t rows, std::int64_t cols) {
  const std::int64_t block_n = std::min<std::int64_t>(next_pow2(cols), 1024), block_m = 2048 / block_n;
  return launch_options(x, {ts::cdiv(rows, block_m), ts::cdiv(cols, block_n)},
                        {{"BLOCK_M", block_m}, {"BLOCK_N", block_n}}, 4);
}

void check_bias_gelu_inputs(const at::Tensor& x, const at::Tensor& bias, std::string_view op) {
  check_float_dtype(x, op, "the input");
  check_row_parameter(x, bias, rows_of(x, op).cols, op, "bias");
  check_index_range(x, op);
}

}  // namespace

at::Tensor bias_gelu_fwd(const at::Tensor& x_in, const at::Tensor& bias_in) {
  check_bias_gelu_inputs(x_in, bias_in, "bias_gelu");
  const at::Tensor x = x_in.contiguous(), bias = bias_in.contiguous();
  at::Tensor y = contiguous_like(x);
  if (x.numel() == 0) return y;
  dispatch_float(x.scalar_type(), "bias_gelu", [&]<class T>(T) {
    static auto k = make_bias_gelu_fwd<T>();
    const Rows r = rows_of(x, "bias_gelu");
    k[bias_gelu_options(x, r.rows, r.cols)](x, bias, y, static_cast<std::int32_t>(r.rows),
                                             static_cast<std::int32_t>(r.cols));
  });
  return y;
}

at::Tensor bias_gelu_bwd(const at::Tensor& dy_in, const at::Tensor& x_in, const at::Tensor& bias_in) {
  check_bias_gelu_inputs(x_in, bias_in, "bias_gelu_backward");
  check_same_dtype(x_in, dy_in, "bias_gelu_backward", "the output gradient");
  TORCH_CHECK(dy_in.sizes() == x_in.sizes(), "tessera::bias_gelu_backward: the output gradient has shape ",
              dy_in.sizes(), " but the input has ", x_in.sizes());
  const at::Tensor x = x_in.contiguous(), bias = bias_in.contiguous(), dy = dy_in.contiguous();
  at::Tensor dx = contiguous_like(x);
  if (x.numel() == 0) return dx;
  dispatch_float(x.scalar_type(), "bias_gelu_backward", [&]<class T>(T) {
    static auto k = make_bias_gelu_bwd<T>();
    const Rows r = rows_of(x, "bias_gelu_backward");
    k[bias_gelu_options(x, r.rows, r.cols)](x, bias, dy, dx, static_cast<std::int32_t>(r.rows),
                                             static_cast<std::int32_t>(r.cols));
  });
  return dx;
}

at::Tensor dropout(const at::Tensor& x_in, double p, std::int64_t seed) {
  check_float_dtype(x_in, "dropout", "the input");
  check_index_range(x_in, "dropout");
  TORCH_CHECK(p >= 0.0 && p <= 1.0, "tessera::dropout: p must be in [0, 1], got ", p);
  // p = 0 is the identity and p = 1 drops everything (as torch.nn.functional.dropout), exactly.
  if (p == 0.0) return x_in.contiguous().clone();
  if (p == 1.0) return at::zeros_like(x_in, at::MemoryFormat::Contiguous);
  const at::Tensor x = x_in.contiguous();
  at::Tensor y = contiguous_like(x);
  if (x.numel() == 0) return y;
  dispatch_float(x.scalar_type(), "dropout", [&]<class T>(T) {
    static auto k = make_dropout<T>();
    k[launch_options(x, {ts::cdiv(x.numel(), kDropoutBlock)}, {}, 4)](
        x, y, static_cast<std::int32_t>(x.numel()), static_cast<float>(p), static_cast<float>(1.0 / (1.0 - p)), seed);
  });
  return y;
}

// ---- meta kernels

at::Tensor bias_gelu_fwd_meta(const at::Tensor& x, const at::Tensor& bias) {
  check_float_dtype(x, "bias_gelu", "the input");
  check_same_dtype(x, bias, "bias_gelu", "bias");
  return contiguous_like(x);
}

at::Tensor bias_gelu_bwd_meta(const at::Tensor&, const at::Tensor& x, const at::Tensor&) {
  return contiguous_like(x);
}

at::Tensor dropout_meta(const at::Tensor& x, double p, std::int64_t) {
  check_float_dtype(x, "dropout", "the input");
  TORCH_CHECK(p >= 0.0 && p <= 1.0, "tessera::dropout: p must be in [0, 1], got ", p);
  return contiguous_like(x);
}

}  // namespace tessera::torch_ops

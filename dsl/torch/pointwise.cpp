// tessera::bias_gelu_fwd/bwd and tessera::dropout: device kernels and meta kernels.
#include "dsl/torch/column_sum.hpp"
#include "dsl/torch/common.hpp"
#include "dsl/torch/ops.hpp"
#include "dsl/torch/pointwise_kernels.hpp"

#include <algorithm>
#include <optional>

namespace tessera::torch_ops {
namespace {

// bias+GELU tiles: 2048 elements (16 per thread of 4 warps), up to 1024 columns wide; the bias is
// indexed by column, so no element needs a division by the row length.
ts::LaunchOptions bias_gelu_options(const at::Tensor& x, std::int64_t rows, std::int64_t cols) {
  const std::int64_t block_n = std::min<std::int64_t>(next_pow2(cols), 1024), block_m = 2048 / block_n;
  return launch_options(x, {ts::cdiv(rows, block_m), ts::cdiv(cols, block_n)},
                        {{"BLOCK_M", block_m},
                         {"BLOCK_N", block_n},
                         {"EVEN_M", whole_tiles(rows, block_m)},
                         {"EVEN_N", whole_tiles(cols, block_n)}},
                        4);
}

// Row-block programs of the backward (grid dim 0): enough for eight programs of 4 warps per
// multiprocessor over all column blocks, but each at least 32 row blocks deep where the rows allow,
// so that the [programs, n] f32 partials stay a few percent of the traffic. One on the interpreter.
std::int64_t bias_gelu_bwd_programs(std::int64_t row_blocks, std::int64_t col_blocks, ts::Executor executor) {
  if (executor != ts::Executor::Cuda && executor != ts::Executor::Hip) return 1;
  const std::int64_t wanted = ts::cdiv(8 * ts::multiprocessor_count(executor), col_blocks);
  return std::clamp<std::int64_t>(std::max(wanted, ts::cdiv(row_blocks, 32)), 1, row_blocks);
}

void check_bias_gelu_inputs(const at::Tensor& x, const at::Tensor& bias, std::string_view op) {
  check_float_dtype(x, op, "the input");
  check_row_parameter(x, bias, rows_of(x, op).cols, op, "bias");
  check_index_range(x, op);
}

// The least m in [0, 2^31) whose uniform draw m * 2^-31 (Triton's uint_to_uniform_float, in f32:
// m converted, then multiplied, each rounded to nearest) is > p: the draws the dropout kernel keeps
// are those of m >= it. The draw is monotone in m, so a binary search finds it. nullopt where no
// draw is > p (p rounds to 1.0f in f32): nothing is kept.
std::optional<std::int32_t> dropout_keep_from(float p) {
  auto draw_above_p = [p](std::int64_t m) { return static_cast<float>(m) * 4.6566127342e-10f > p; };
  std::int64_t lo = 0, hi = std::int64_t{1} << 31;  // the answer is in [lo, hi); hi: none
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (draw_above_p(mid)) hi = mid;
    else lo = mid + 1;
  }
  if (lo == std::int64_t{1} << 31) return std::nullopt;
  return static_cast<std::int32_t>(lo);
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

std::tuple<at::Tensor, at::Tensor> bias_gelu_bwd(const at::Tensor& dy_in, const at::Tensor& x_in,
                                                 const at::Tensor& bias_in) {
  check_bias_gelu_inputs(x_in, bias_in, "bias_gelu_backward");
  check_same_dtype(x_in, dy_in, "bias_gelu_backward", "the output gradient");
  TORCH_CHECK(dy_in.sizes() == x_in.sizes(), "tessera::bias_gelu_backward: the output gradient has shape ",
              dy_in.sizes(), " but the input has ", x_in.sizes());
  const at::Tensor x = x_in.contiguous(), bias = bias_in.contiguous(), dy = dy_in.contiguous();
  at::Tensor dx = contiguous_like(x), dbias = contiguous_like(bias);
  const Rows r = rows_of(x, "bias_gelu_backward");
  if (r.cols == 0) return {dx, dbias};
  if (r.rows == 0) return {dx, dbias.zero_()};
  ts::LaunchOptions opts = bias_gelu_options(x, r.rows, r.cols);
  const auto blocks = opts.grid.resolve(opts.meta);
  const std::int64_t row_blocks = blocks[0], col_blocks = blocks[1];
  const std::int64_t programs = bias_gelu_bwd_programs(row_blocks, col_blocks, executor_of(x));
  opts.grid = {programs, col_blocks};
  at::Tensor partial = at::empty({programs, r.cols}, x.options().dtype(at::kFloat));
  dispatch_float(x.scalar_type(), "bias_gelu_backward", [&]<class T>(T) {
    static auto k = make_bias_gelu_bwd<T>();
    k[opts](x, bias, dy, dx, partial, static_cast<std::int32_t>(r.rows), static_cast<std::int32_t>(r.cols));
    sum_partials<T>(partial, dbias, programs, r.cols);
  });
  return {dx, dbias};
}

at::Tensor dropout(const at::Tensor& x_in, double p, std::int64_t seed) {
  check_float_dtype(x_in, "dropout", "the input");
  check_index_range(x_in, "dropout");
  TORCH_CHECK(p >= 0.0 && p <= 1.0, "tessera::dropout: p must be in [0, 1], got ", p);
  // p = 0 is the identity and p = 1 drops everything (as torch.nn.functional.dropout), exactly.
  if (p == 0.0) return x_in.contiguous().clone();
  if (p == 1.0) return at::zeros_like(x_in, at::MemoryFormat::Contiguous);
  const std::optional<std::int32_t> keep_from = dropout_keep_from(static_cast<float>(p));
  if (!keep_from) return at::zeros_like(x_in, at::MemoryFormat::Contiguous);
  const at::Tensor x = x_in.contiguous();
  at::Tensor y = contiguous_like(x);
  if (x.numel() == 0) return y;
  dispatch_float(x.scalar_type(), "dropout", [&]<class T>(T) {
    static auto k = make_dropout<T>();
    k[launch_options(x, {ts::cdiv(x.numel(), kDropoutBlock)}, {{"EVEN", whole_tiles(x.numel(), kDropoutBlock)}}, 4)](
        x, y, static_cast<std::int32_t>(x.numel()), *keep_from, static_cast<float>(1.0 / (1.0 - p)), seed);
  });
  return y;
}

// ---- meta kernels

at::Tensor bias_gelu_fwd_meta(const at::Tensor& x, const at::Tensor& bias) {
  check_float_dtype(x, "bias_gelu", "the input");
  check_same_dtype(x, bias, "bias_gelu", "bias");
  return contiguous_like(x);
}

std::tuple<at::Tensor, at::Tensor> bias_gelu_bwd_meta(const at::Tensor&, const at::Tensor& x, const at::Tensor& bias) {
  return {contiguous_like(x), contiguous_like(bias)};
}

at::Tensor dropout_meta(const at::Tensor& x, double p, std::int64_t) {
  check_float_dtype(x, "dropout", "the input");
  TORCH_CHECK(p >= 0.0 && p <= 1.0, "tessera::dropout: p must be in [0, 1], got ", p);
  return contiguous_like(x);
}

}  // namespace tessera::torch_ops

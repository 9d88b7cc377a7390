// tessera::softmax_fwd/bwd and tessera::cross_entropy_fwd/bwd: device kernels and meta kernels.
#include "dsl/torch/common.hpp"
#include "dsl/torch/ops.hpp"
#include "dsl/torch/softmax_kernels.hpp"

#include <algorithm>
#include <limits>

namespace tessera::torch_ops {
namespace {

// Softmax is over the last dimension: `dim` must name it.
void check_last_dim(const at::Tensor& x, std::int64_t dim, std::string_view op) {
  TORCH_CHECK(x.dim() >= 1, "tessera::", op, ": the input must have at least one dimension, got a scalar");
  const std::int64_t d = dim < 0 ? dim + x.dim() : dim;
  TORCH_CHECK(d == x.dim() - 1, "tessera::", op, ": only the last dimension (", x.dim() - 1, " or -1) is supported, got dim=",
              dim, "; move the dimension last (movedim) first");
}

void check_cross_entropy_inputs(const at::Tensor& logits, const at::Tensor& target, std::string_view op) {
  check_float_dtype(logits, op, "logits");
  TORCH_CHECK(logits.dim() == 2, "tessera::", op, ": logits must be [rows, classes], got shape ", logits.sizes());
  TORCH_CHECK(target.dim() == 1 && target.size(0) == logits.size(0), "tessera::", op, ": target must be [",
              logits.size(0), "] (one class index per row), got shape ", target.sizes());
  TORCH_CHECK(target.scalar_type() == at::kLong, "tessera::", op, ": target must be int64, got ", target.scalar_type());
  check_same_device(logits, target, op, "target");
  check_index_range(logits, op);
}

// Column block of the cross-entropy loops: the whole row up to 8192 columns (16 warps there,
// row_warps). Against 4096 at 8 warps, logits 8192 x 32768 fp16 on an H100 (session 39, each
// variant built on the device, `torch_ops_bench.py --ops cross_entropy --tessera-only`, two
// rounds, GB/s): fwd 2565 / 2576 -> 2604 / 2591, bwd 2893 / 2902 -> 2944 / 2939; 2048 at 8 warps
// and 4096 at 16 warps were no better than 4096 at 8.
std::int64_t cross_entropy_block(std::int64_t v) { return std::min<std::int64_t>(next_pow2(v), 8192); }

}  // namespace

at::Tensor softmax_fwd(const at::Tensor& x_in, std::int64_t dim) {
  check_last_dim(x_in, dim, "softmax");
  check_float_dtype(x_in, "softmax", "the input");
  check_index_range(x_in, "softmax");
  const at::Tensor x = x_in.contiguous();
  at::Tensor y = contiguous_like(x);
  const Rows r = rows_of(x, "softmax");
  if (r.rows == 0 || r.cols == 0) return y;
  check_row_length(r.cols, "softmax");
  const std::int64_t block = next_pow2(r.cols);
  dispatch_float(x.scalar_type(), "softmax", [&]<class T>(T) {
    static auto k = make_softmax_fwd<T>();
    k[launch_options(x, {r.rows}, row_meta(block, r.cols), row_warps(block))](x, y, static_cast<std::int32_t>(r.cols));
  });
  return y;
}

at::Tensor softmax_bwd(const at::Tensor& dy_in, const at::Tensor& y_in, std::int64_t dim) {
  check_last_dim(y_in, dim, "softmax_backward");
  check_float_dtype(y_in, "softmax_backward", "the output");
  check_same_dtype(y_in, dy_in, "softmax_backward", "the output gradient");
  TORCH_CHECK(dy_in.sizes() == y_in.sizes(), "tessera::softmax_backward: the output gradient has shape ", dy_in.sizes(),
              " but the output has ", y_in.sizes());
  check_index_range(y_in, "softmax_backward");
  const at::Tensor y = y_in.contiguous(), dy = dy_in.contiguous();
  at::Tensor dx = contiguous_like(y);
  const Rows r = rows_of(y, "softmax_backward");
  if (r.rows == 0 || r.cols == 0) return dx;
  check_row_length(r.cols, "softmax_backward");
  const std::int64_t block = next_pow2(r.cols);
  dispatch_float(y.scalar_type(), "softmax_backward", [&]<class T>(T) {
    static auto k = make_softmax_bwd<T>();
    k[launch_options(y, {r.rows}, row_meta(block, r.cols), row_warps(block))](y, dy, dx, static_cast<std::int32_t>(r.cols));
  });
  return dx;
}

std::tuple<at::Tensor, at::Tensor> cross_entropy_fwd(const at::Tensor& logits_in, const at::Tensor& target_in,
                                                     std::int64_t ignore_index) {
  check_cross_entropy_inputs(logits_in, target_in, "cross_entropy");
  const at::Tensor logits = logits_in.contiguous(), target = target_in.contiguous();
  at::Tensor loss = per_row_f32(logits), lse = per_row_f32(logits);
  const std::int64_t rows = logits.size(0), v = logits.size(1);
  TORCH_CHECK(v > 0 || rows == 0, "tessera::cross_entropy: logits have no classes (shape ", logits.sizes(), ")");
  if (rows == 0) return {loss, lse};
  // On the GPU an out-of-range target gives a NaN loss (checking here would wait for the device);
  // CPU tensors are checked, cheaply.
  if (target.device().is_cpu()) {
    const bool bad = (target.ne(ignore_index) & (target.lt(0) | target.ge(v))).any().item<bool>();
    TORCH_CHECK(!bad, "tessera::cross_entropy: a target is outside [0, ", v, ") and is not ignore_index (",
                ignore_index, ")");
  }
  const std::int64_t block = cross_entropy_block(v);
  dispatch_float(logits.scalar_type(), "cross_entropy", [&]<class T>(T) {
    static auto k = make_cross_entropy_fwd<T>();
    k[launch_options(logits, {rows}, row_meta(block, v), row_warps(block))](
        logits, target, loss, lse, static_cast<std::int32_t>(v), static_cast<std::int32_t>(ignore_index));
  });
  return {loss, lse};
}

// cross_entropy_mean's program: kMeanStepRows rows a step, at most 16 steps.
constexpr std::int64_t kMeanStepRows = 4096, kMeanProgramRows = 16 * kMeanStepRows;

namespace {
// A 0-dim f32 tensor on x's device: cross_entropy_mean's outputs.
at::Tensor scalar_f32(const at::Tensor& x) { return at::empty({}, x.options().dtype(at::kFloat)); }
}  // namespace

std::tuple<at::Tensor, at::Tensor> cross_entropy_mean(const at::Tensor& losses_in, const at::Tensor& target_in,
                                                      std::int64_t ignore_index) {
  TORCH_CHECK(losses_in.dim() == 1 && losses_in.scalar_type() == at::kFloat,
              "tessera::cross_entropy_mean: losses must be float32 [rows], got ", losses_in.scalar_type(), " ",
              losses_in.sizes());
  TORCH_CHECK(target_in.dim() == 1 && target_in.size(0) == losses_in.size(0) && target_in.scalar_type() == at::kLong,
              "tessera::cross_entropy_mean: target must be int64 [", losses_in.size(0), "], got ",
              target_in.scalar_type(), " ", target_in.sizes());
  check_same_device(losses_in, target_in, "cross_entropy_mean", "target");
  check_index_range(losses_in, "cross_entropy_mean");
  const at::Tensor losses = losses_in.contiguous(), target = target_in.contiguous();
  const std::int64_t rows = losses.size(0);
  // One program waits for one step's loads at a time (about a microsecond on an H100): past 16
  // steps torch's parallel reductions (five launches, about 30 us) are the faster way.
  if (rows > kMeanProgramRows) {
    at::Tensor count = target.ne(ignore_index).sum().to(at::kFloat);
    return {losses.sum() / count, count};
  }
  at::Tensor mean = scalar_f32(losses), count = scalar_f32(losses);
  if (rows == 0) return {mean.fill_(std::numeric_limits<float>::quiet_NaN()), count.zero_()};
  // 4096 rows a step on 8 warps (16 a thread); fewer rows, one step of the next power of two.
  const std::int64_t block = std::min(kMeanStepRows, std::max<std::int64_t>(32, next_pow2(rows)));
  static auto k = make_cross_entropy_mean();
  k[launch_options(losses, {1}, {{"BLOCK", block}}, row_warps(block))](losses, target, mean, count,
                                                                       static_cast<std::int32_t>(rows),
                                                                       static_cast<std::int32_t>(ignore_index));
  return {mean, count};
}

at::Tensor cross_entropy_bwd(const at::Tensor& grad_scale, const at::Tensor& logits_in, const at::Tensor& target_in,
                             const at::Tensor& lse_in, std::int64_t ignore_index) {
  check_cross_entropy_inputs(logits_in, target_in, "cross_entropy_backward");
  TORCH_CHECK(grad_scale.numel() == 1 && grad_scale.scalar_type() == at::kFloat,
              "tessera::cross_entropy_backward: grad_scale must be one float32 value, got ", grad_scale.sizes(), " ",
              grad_scale.scalar_type());
  const at::Tensor logits = logits_in.contiguous(), target = target_in.contiguous(), lse = lse_in.contiguous();
  const at::Tensor scale = grad_scale.contiguous();
  const std::int64_t rows = logits.size(0), v = logits.size(1);
  TORCH_CHECK(lse.numel() == rows && lse.scalar_type() == at::kFloat,
              "tessera::cross_entropy_backward: lse must be float32 with one value per row (", rows, ")");
  at::Tensor dlogits = contiguous_like(logits);
  if (rows == 0 || v == 0) return dlogits;
  const std::int64_t block = cross_entropy_block(v);
  dispatch_float(logits.scalar_type(), "cross_entropy_backward", [&]<class T>(T) {
    static auto k = make_cross_entropy_bwd<T>();
    k[launch_options(logits, {rows}, row_meta(block, v), row_warps(block))](
        logits, target, lse, scale, dlogits, static_cast<std::int32_t>(v), static_cast<std::int32_t>(ignore_index));
  });
  return dlogits;
}

// ---- meta kernels

at::Tensor softmax_fwd_meta(const at::Tensor& x, std::int64_t dim) {
  check_last_dim(x, dim, "softmax");
  check_float_dtype(x, "softmax", "the input");
  return contiguous_like(x);
}

at::Tensor softmax_bwd_meta(const at::Tensor&, const at::Tensor& y, std::int64_t) {
  return contiguous_like(y);
}

std::tuple<at::Tensor, at::Tensor> cross_entropy_fwd_meta(const at::Tensor& logits, const at::Tensor& target,
                                                          std::int64_t) {
  check_float_dtype(logits, "cross_entropy", "logits");
  TORCH_CHECK(logits.dim() == 2 && target.dim() == 1, "tessera::cross_entropy: logits must be [rows, classes] and target [rows]");
  return {per_row_f32(logits), per_row_f32(logits)};
}

std::tuple<at::Tensor, at::Tensor> cross_entropy_mean_meta(const at::Tensor& losses, const at::Tensor&, std::int64_t) {
  return {scalar_f32(losses), scalar_f32(losses)};
}

at::Tensor cross_entropy_bwd_meta(const at::Tensor&, const at::Tensor& logits, const at::Tensor&, const at::Tensor&,
                                  std::int64_t) {
  return contiguous_like(logits);
}

}  // namespace tessera::torch_ops

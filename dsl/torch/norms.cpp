// tessera::layer_norm_fwd/bwd and tessera::rms_norm_fwd/bwd: the device kernels (CPU tensors on
// the interpreter, CUDA tensors on their GPU and PyTorch's current stream) and their meta (fake
// tensor) kernels. The autograd ops that use them are in autograd.cpp.
#include "dsl/torch/column_sum.hpp"
#include "dsl/torch/common.hpp"
#include "dsl/torch/norm_kernels.hpp"
#include "dsl/torch/ops.hpp"

namespace tessera::torch_ops {
namespace {

void check_norm_inputs(const at::Tensor& x, const at::Tensor& w, std::string_view op) {
  check_float_dtype(x, op, "the input");
  const Rows r = rows_of(x, op);
  check_row_parameter(x, w, r.cols, op, "weight");
  check_row_length(r.cols, op);
  check_index_range(x, op);
}

// Warps of a backward dX program: it holds about ten f32 row tiles live (x, dy, w, x_hat, w*dy,
// the partial sums and, in RMSNorm's, the prefetched next row), 177 registers a thread for a
// 4096-wide f16 row at 8 warps on the H200, so a single program fitted on a multiprocessor; 16
// warps halve that.
int bwd_warps(std::int64_t block) { return block >= 4096 ? 16 : block >= 1024 ? 8 : 4; }

// A register cap (CompileOptions::maxnreg) under which two programs of num_warps fit in a
// multiprocessor's 64K registers. Layer norm's dX program, with its next row prefetched in
// registers, took 93 registers at 16 warps, one program per multiprocessor, and the row loads of
// one program could not cover the memory latency. Capped at 64 (32 bytes spilled), two programs:
// 1939 -> 2250 GB/s (H100, fp16 32768 x 4096, tests/bench/torch_ops_bench.py). Only for at most
// 8 elements a thread: a 8192-wide row at 16 warps takes 128 registers already.
int two_programs_per_sm(int num_warps) { return std::min(255, 65536 / (2 * 32 * num_warps)); }

// Layer norm's dX row loop depth (norm_kernels.hpp, LoopOptions): rows of x and dy in shared
// memory, this one and up to two ahead, in at most 160 KB (a 4096-wide f16 row: 48 KB, two
// programs per multiprocessor); 1 (not pipelined) where two stages do not fit. Three stages
// instead of the row prefetched in registers: 2249 -> 2394 GB/s (H100, the setup above).
std::int64_t row_stages(std::int64_t block, std::int64_t elem_bytes) {
  constexpr std::int64_t kRingBytes = 160 * 1024;
  return std::clamp<std::int64_t>(kRingBytes / (2 * block * elem_bytes), 1, 3);
}

}  // namespace

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_fwd(const at::Tensor& x_in, const at::Tensor& w_in,
                                                             const at::Tensor& b_in, double eps) {
  check_norm_inputs(x_in, w_in, "layer_norm");
  check_row_parameter(x_in, b_in, x_in.size(-1), "layer_norm", "bias");
  const at::Tensor x = x_in.contiguous(), w = w_in.contiguous(), b = b_in.contiguous();
  at::Tensor y = contiguous_like(x), mean = per_row_f32(x), rstd = per_row_f32(x);
  const Rows r = rows_of(x, "layer_norm");
  if (r.rows == 0 || r.cols == 0) return {y, mean, rstd};
  const std::int64_t block = next_pow2(r.cols);
  dispatch_float(x.scalar_type(), "layer_norm", [&]<class T>(T) {
    static auto k = make_layer_norm_fwd<T>();
    k[launch_options(x, {r.rows}, row_meta(block, r.cols), row_warps(block))](
        x, y, w, b, mean, rstd, static_cast<std::int32_t>(r.cols), static_cast<float>(eps));
  });
  return {y, mean, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_bwd(const at::Tensor& dy_in, const at::Tensor& x_in,
                                                             const at::Tensor& w_in, const at::Tensor& mean_in,
                                                             const at::Tensor& rstd_in) {
  check_norm_inputs(x_in, w_in, "layer_norm_backward");
  check_same_dtype(x_in, dy_in, "layer_norm_backward", "the output gradient");
  TORCH_CHECK(dy_in.sizes() == x_in.sizes(), "tessera::layer_norm_backward: the output gradient has shape ",
              dy_in.sizes(), " but the input has ", x_in.sizes());
  const at::Tensor x = x_in.contiguous(), dy = dy_in.contiguous(), w = w_in.contiguous();
  const at::Tensor mean = mean_in.contiguous(), rstd = rstd_in.contiguous();
  const Rows r = rows_of(x, "layer_norm_backward");
  TORCH_CHECK(mean.numel() == r.rows && rstd.numel() == r.rows && mean.scalar_type() == at::kFloat &&
                  rstd.scalar_type() == at::kFloat,
              "tessera::layer_norm_backward: mean and rstd must be float32 with one value per row (", r.rows, ")");
  at::Tensor dx = contiguous_like(x), dw = contiguous_like(w), db = contiguous_like(w);
  if (r.cols == 0) return {dx, dw, db};
  if (r.rows == 0) return {dx, dw.zero_(), db.zero_()};
  const std::int64_t block = next_pow2(r.cols), programs = norm_bwd_programs(r.rows);
  at::Tensor dw_partial = at::empty({programs, r.cols}, x.options().dtype(at::kFloat));
  at::Tensor db_partial = at::empty({programs, r.cols}, x.options().dtype(at::kFloat));
  dispatch_float(x.scalar_type(), "layer_norm_backward", [&]<class T>(T) {
    static auto k = make_layer_norm_bwd_dx<T>();
    ts::MetaValues meta = row_meta(block, r.cols);
    meta.emplace_back("ROW_STAGES", row_stages(block, sizeof(T)));
    ts::LaunchOptions o = launch_options(x, {programs}, std::move(meta), bwd_warps(block));
    if (block <= 8 * 32 * o.num_warps) o.compile.maxnreg = two_programs_per_sm(o.num_warps);
    k[o](x, dy, dx, w, mean, rstd, dw_partial, db_partial, static_cast<std::int32_t>(r.rows),
         static_cast<std::int32_t>(r.cols));
    sum_partials<T>(dw_partial, dw, programs, r.cols);
    sum_partials<T>(db_partial, db, programs, r.cols);
  });
  return {dx, dw, db};
}

std::tuple<at::Tensor, at::Tensor> rms_norm_fwd(const at::Tensor& x_in, const at::Tensor& w_in, double eps) {
  check_norm_inputs(x_in, w_in, "rms_norm");
  const at::Tensor x = x_in.contiguous(), w = w_in.contiguous();
  at::Tensor y = contiguous_like(x), rstd = per_row_f32(x);
  const Rows r = rows_of(x, "rms_norm");
  if (r.rows == 0 || r.cols == 0) return {y, rstd};
  const std::int64_t block = next_pow2(r.cols);
  dispatch_float(x.scalar_type(), "rms_norm", [&]<class T>(T) {
    static auto k = make_rms_norm_fwd<T>();
    k[launch_options(x, {r.rows}, row_meta(block, r.cols), row_warps(block))](
        x, y, w, rstd, static_cast<std::int32_t>(r.cols), static_cast<float>(eps));
  });
  return {y, rstd};
}

std::tuple<at::Tensor, at::Tensor> rms_norm_bwd(const at::Tensor& dy_in, const at::Tensor& x_in,
                                                const at::Tensor& w_in, const at::Tensor& rstd_in) {
  check_norm_inputs(x_in, w_in, "rms_norm_backward");
  check_same_dtype(x_in, dy_in, "rms_norm_backward", "the output gradient");
  TORCH_CHECK(dy_in.sizes() == x_in.sizes(), "tessera::rms_norm_backward: the output gradient has shape ",
              dy_in.sizes(), " but the input has ", x_in.sizes());
  const at::Tensor x = x_in.contiguous(), dy = dy_in.contiguous(), w = w_in.contiguous(), rstd = rstd_in.contiguous();
  const Rows r = rows_of(x, "rms_norm_backward");
  TORCH_CHECK(rstd.numel() == r.rows && rstd.scalar_type() == at::kFloat,
              "tessera::rms_norm_backward: rstd must be float32 with one value per row (", r.rows, ")");
  at::Tensor dx = contiguous_like(x), dw = contiguous_like(w);
  if (r.cols == 0) return {dx, dw};
  if (r.rows == 0) return {dx, dw.zero_()};
  const std::int64_t block = next_pow2(r.cols), programs = norm_bwd_programs(r.rows);
  at::Tensor dw_partial = at::empty({programs, r.cols}, x.options().dtype(at::kFloat));
  dispatch_float(x.scalar_type(), "rms_norm_backward", [&]<class T>(T) {
    static auto k = make_rms_norm_bwd_dx<T>();
    k[launch_options(x, {programs}, row_meta(block, r.cols), bwd_warps(block))](
        x, dy, dx, w, rstd, dw_partial, static_cast<std::int32_t>(r.rows), static_cast<std::int32_t>(r.cols));
    sum_partials<T>(dw_partial, dw, programs, r.cols);
  });
  return {dx, dw};
}

// ---- meta (fake tensor) kernels: the outputs' shapes, dtypes and strides, no data.

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_fwd_meta(const at::Tensor& x, const at::Tensor& w,
                                                                  const at::Tensor& b, double) {
  check_float_dtype(x, "layer_norm", "the input");
  check_same_dtype(x, w, "layer_norm", "weight");
  check_same_dtype(x, b, "layer_norm", "bias");
  return {contiguous_like(x), per_row_f32(x), per_row_f32(x)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> layer_norm_bwd_meta(const at::Tensor&, const at::Tensor& x,
                                                                  const at::Tensor& w, const at::Tensor&,
                                                                  const at::Tensor&) {
  return {contiguous_like(x), contiguous_like(w), contiguous_like(w)};
}

std::tuple<at::Tensor, at::Tensor> rms_norm_fwd_meta(const at::Tensor& x, const at::Tensor& w, double) {
  check_float_dtype(x, "rms_norm", "the input");
  check_same_dtype(x, w, "rms_norm", "weight");
  return {contiguous_like(x), per_row_f32(x)};
}

std::tuple<at::Tensor, at::Tensor> rms_norm_bwd_meta(const at::Tensor&, const at::Tensor& x, const at::Tensor& w,
                                                     const at::Tensor&) {
  return {contiguous_like(x), contiguous_like(w)};
}

}  // namespace tessera::torch_ops

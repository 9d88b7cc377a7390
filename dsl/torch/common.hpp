// What every op of the tessera::torch component shares: argument checks in PyTorch's terms (a
// c10::Error, which Python sees as a RuntimeError, naming the op and the argument), the rows view
// of a tensor normalized over its last dimension, the element-type dispatch from a PyTorch dtype
// to a kernel instantiated for it, and the launch options that put a kernel on the tensors' device
// and PyTorch's current stream. Internal to dsl/torch/.
#pragma once
#include <ATen/ATen.h>
#include <tessera/tessera.hpp>
#include <tessera/torch.hpp>

#include <cstdint>
#include <string_view>

namespace tessera::torch_ops {
namespace ts = ::tessera;

// The longest row a one-tile-per-row kernel takes (elements). Longer rows would need a tile of
// 64K f32 values in one program's registers; cross-entropy loops over its rows and has no limit.
inline constexpr std::int64_t kMaxRowLength = 32768;

inline std::int64_t next_pow2(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// x viewed as [rows, cols] over its last dimension (a scalar is refused: it has no last dimension).
struct Rows {
  std::int64_t rows = 0, cols = 0;
};

inline Rows rows_of(const at::Tensor& x, std::string_view op) {
  TORCH_CHECK(x.dim() >= 1, "tessera::", op, ": the input must have at least one dimension, got a scalar");
  const std::int64_t cols = x.size(-1);
  return {cols == 0 ? 0 : x.numel() / cols, cols};
}

// An output shaped and typed as x, contiguous (the kernels index it densely); symbolic shapes
// pass through, so meta kernels use it too.
inline at::Tensor contiguous_like(const at::Tensor& x) { return at::empty_like(x, at::MemoryFormat::Contiguous); }

// One f32 value per row of x (norm statistics, per-row losses): x's shape without its last dimension.
inline at::Tensor per_row_f32(const at::Tensor& x) {
  return at::empty_symint(x.sym_sizes().slice(0, x.dim() - 1), x.options().dtype(at::kFloat));
}

// The element types the ops are instantiated for.
inline void check_float_dtype(const at::Tensor& t, std::string_view op, std::string_view name) {
  const auto s = t.scalar_type();
  TORCH_CHECK(s == at::kFloat || s == at::kHalf || s == at::kBFloat16, "tessera::", op, ": ", name,
              " must be float32, float16 or bfloat16, got ", s);
}

inline void check_same_dtype(const at::Tensor& a, const at::Tensor& b, std::string_view op, std::string_view name) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "tessera::", op, ": ", name, " has dtype ", b.scalar_type(),
              " but the input has ", a.scalar_type());
}

inline void check_same_device(const at::Tensor& a, const at::Tensor& b, std::string_view op, std::string_view name) {
  TORCH_CHECK(a.device() == b.device(), "tessera::", op, ": ", name, " is on ", b.device(), " but the input is on ",
              a.device());
}

// A [cols] parameter (a norm's weight, a bias) for rows of length `cols`.
inline void check_row_parameter(const at::Tensor& x, const at::Tensor& p, std::int64_t cols, std::string_view op,
                                std::string_view name) {
  TORCH_CHECK(p.dim() == 1 && p.size(0) == cols, "tessera::", op, ": ", name, " must have shape [", cols,
              "] (the input's last dimension), got ", p.sizes());
  check_same_dtype(x, p, op, name);
  check_same_device(x, p, op, name);
}

inline void check_row_length(std::int64_t cols, std::string_view op) {
  TORCH_CHECK(cols <= kMaxRowLength, "tessera::", op, ": rows of ", cols, " elements are longer than the ",
              kMaxRowLength, " this kernel holds in one tile");
}

// Kernels index with 32-bit offsets (program_id * BLOCK, row * stride, up to a block past the
// end): tensors of 2^31 - 2^16 elements or more are refused.
inline void check_index_range(const at::Tensor& t, std::string_view op) {
  TORCH_CHECK(t.numel() < (std::int64_t{1} << 31) - (std::int64_t{1} << 16), "tessera::", op, ": tensors of ",
              t.numel(), " elements (about 2^31 or more) are not supported (the kernels use 32-bit offsets)");
}

// Calls f(T{}) with T the tessera element type of `dtype` (float, ts::half or ts::bfloat16).
template <class F>
decltype(auto) dispatch_float(at::ScalarType dtype, std::string_view op, F&& f) {
  switch (dtype) {
    case at::kFloat: return f(float{});
    case at::kHalf: return f(ts::half{});
    case at::kBFloat16: return f(ts::bfloat16{});
    default: break;
  }
  TORCH_CHECK(false, "tessera::", op, ": no kernel for dtype ", dtype);
}

// Launch options for a kernel over tensors on t's device: its CUDA device and PyTorch's current
// stream there (with a CUDA build of PyTorch), or the interpreter for CPU tensors.
inline ts::LaunchOptions launch_options(const at::Tensor& t, ts::Grid grid, ts::MetaValues meta, int num_warps) {
  return ts::torch::options_for(t, {.grid = std::move(grid), .meta = std::move(meta), .num_warps = num_warps});
}

// The executor a launch over t resolves to (launch_options leaves ts::Executor::Auto, which
// follows the tensors: tessera takes a cuda tensor as CUDA memory, a cpu tensor as host memory):
// for what an op decides before it launches (split-K, autotuning, program counts), which must
// not read the unresolved Auto as "no GPU".
inline ts::Executor executor_of(const at::Tensor& t) {
  return t.is_cuda() ? ts::Executor::Cuda : ts::Executor::Interpreter;
}

// The value of a meta flag that in_bounds (row_mask.hpp) folds on: 1 where `n` indices split into
// whole tiles of `tile`, so that no program's tile is partial.
inline std::int64_t whole_tiles(std::int64_t n, std::int64_t tile) { return n % tile == 0 ? 1 : 0; }

// The meta-parameters of a row kernel (norm_kernels.hpp, softmax_kernels.hpp) over rows of `cols`
// read `block` columns at a time: BLOCK, and EVEN where no block is partial (row_mask.hpp).
inline ts::MetaValues row_meta(std::int64_t block, std::int64_t cols) {
  return {{"BLOCK", block}, {"EVEN", whole_tiles(cols, block)}};
}

// Warps for a one-row-per-program kernel whose row tile holds `block` elements.
inline int row_warps(std::int64_t block) { return block >= 8192 ? 16 : block >= 2048 ? 8 : 4; }

}  // namespace tessera::torch_ops

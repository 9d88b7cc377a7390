// tessera::matmul_fwd: C = A·B for 2-D A [M, K] and B [K, N] of one float dtype, through the
// tutorial kernel of examples/matmul_kernels.hpp (one copy of it: tensor cores on NVIDIA, Triton's
// grouped order, masked edges, any strides, so that the backward pass's transposed operands are
// views, never copies). Products of few output tiles over a long K (a weight's gradient over many
// tokens) split K over the multiprocessors (ex::make_matmul_split_k). f32 follows PyTorch's TF32 switch (torch.backends.cuda.matmul.allow_tf32):
// tf32 tensor cores when it is on, full f32 products (FMA units) when it is off, its default.
#include "dsl/torch/common.hpp"
#include "dsl/torch/kernel_name.hpp"
#include "dsl/torch/ops.hpp"
#include "examples/matmul_kernels.hpp"

#include <cstdlib>
#include <limits>
#include <string_view>

#if defined(TESSERA_TORCH_HAS_CUDA_STREAMS) && __has_include(<c10/cuda/CUDAGraphsC10Utils.h>)
#include <c10/cuda/CUDAGraphsC10Utils.h>
#endif

namespace tessera::torch_ops {
namespace {
namespace ex = ::tessera_examples;

void check_matmul_inputs(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2, "tessera::matmul: takes 2-D tensors, got a of shape ", a.sizes(),
              " and b of shape ", b.sizes());
  check_float_dtype(a, "matmul", "a");
  check_same_dtype(a, b, "matmul", "b");
  check_same_device(a, b, "matmul", "b");
  TORCH_CHECK(a.size(1) == b.size(0), "tessera::matmul: a is ", a.sizes(), " and b is ", b.sizes(), ": a's ",
              a.size(1), " columns must equal b's ", b.size(0), " rows");
  // The kernel takes sizes and strides as i32 and forms offsets row * stride + column in i32.
  for (const at::Tensor* t : {&a, &b}) {
    std::int64_t extent = 1;
    for (int d = 0; d < 2; ++d) extent += (t->size(d) - 1) * std::max<std::int64_t>(t->stride(d), 0);
    TORCH_CHECK(t->size(0) == 0 || t->size(1) == 0 || extent < std::numeric_limits<std::int32_t>::max(),
                "tessera::matmul: an operand spanning ", extent,
                " elements (2^31 or more) is not supported (the kernel uses 32-bit offsets)");
  }
}

// Tiles: the fastest configuration measured on the H200 for large 16-bit products (notes/
// tensor-cores.md: 128x256x64, 8 warps, 3 stages), the examples' default elsewhere; f32 operands
// take the smaller tile (three 128x256x64 f32 stages would not fit in shared memory) over 8 warps
// (with 4, tf32's 128 accumulators and 32-bit fragments take 255 registers and spill on sm_90a;
// with 8, 128 registers and no spill).
ex::MatmulConfig config_for(std::int64_t m, std::int64_t n, at::ScalarType dtype) {
  if (dtype == at::kFloat) return {.num_warps = 8};
  if (m * n >= std::int64_t{4096} * 4096)
    return {.block_m = 128, .block_n = 256, .block_k = 64, .group_m = 8, .num_warps = 8, .num_stages = 3};
  return {};
}

// The tile of a product whose K is split: each program runs a long K slice, where the large
// 16-bit tile is the fastest (H100, a weight's gradient 1024 x 16384 x 1024: 496 TFLOP/s on
// 128x256x64/w8/s3 in 4 slices, 289 on the default 128x128x32/w4/s3 in 2).
ex::MatmulConfig split_k_config(const ex::MatmulConfig& cfg, at::ScalarType dtype) {
  if (dtype == at::kFloat) return cfg;
  return {.block_m = 128, .block_n = 256, .block_k = 64, .group_m = 8, .num_warps = 8, .num_stages = 3};
}

// ex::matmul_options for cfg, on a's device and PyTorch's stream there.
ts::LaunchOptions tile_options(const at::Tensor& a, const ex::MatmulShape& s, const ex::MatmulConfig& cfg) {
  const ts::LaunchOptions plain = ex::matmul_options(s, cfg);
  ts::LaunchOptions opts = launch_options(a, plain.grid, plain.meta, plain.num_warps);
  opts.num_stages = plain.num_stages;
  return opts;
}

constexpr bool is_tf32(auto t, ts::InputPrecision p) { return std::is_same_v<decltype(t), float> && p == ts::InputPrecision::tf32; }

// How many K slices (ex::split_k_slices) on the tensors' device: 1 for CPU tensors (the
// interpreter gains nothing), and where the partial products would need 32-bit offsets past 2^31.
std::int64_t slices_for(const ex::MatmulShape& s, const ex::MatmulConfig& cfg, ts::Executor executor) {
  if (executor != ts::Executor::Cuda && executor != ts::Executor::Hip) return 1;
  const std::int64_t slices = ex::split_k_slices(s, cfg, ts::multiprocessor_count(executor));
  if (slices * s.m * s.n >= std::numeric_limits<std::int32_t>::max()) return 1;
  return slices;
}

// C = A·B with K in slices (ex::make_matmul_split_k): the partial products in an f32 workspace of
// [slices, M, N], then their sum cast into C.
template <class T, ts::InputPrecision P>
void launch_split_k(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, const ex::MatmulShape& s,
                    const ex::MatmulConfig& cfg, std::int64_t requested_slices, const ts::LaunchOptions& tile_opts) {
  static auto partial_kernel = ex::make_matmul_split_k<T, P>(kernel_name<T>(is_tf32(T{}, P) ? "matmul_split_k_tf32" : "matmul_split_k").c_str());
  static auto sum_kernel = ex::make_split_k_sum<float, T>(kernel_name<T>("split_k_sum").c_str());
  const std::int64_t depth = ex::split_k_depth(s, cfg, requested_slices);
  const std::int64_t slices = (s.k + depth - 1) / depth;  // rounding to BLOCK_K may leave fewer
  at::Tensor partial = at::empty({slices, s.m, s.n}, a.options().dtype(at::kFloat));
  ts::LaunchOptions opts = tile_opts;
  opts.grid = {tile_opts.grid.resolve(tile_opts.meta)[0], slices};
  auto i32 = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  partial_kernel[opts](a, b, partial, i32(s.m), i32(s.n), i32(s.k), i32(s.stride_am), i32(s.stride_ak), i32(s.stride_bk),
                       i32(s.stride_bn), i32(depth));
  const ts::LaunchOptions plain_sum = ex::split_k_sum_options(s.m, s.n);
  sum_kernel[launch_options(a, plain_sum.grid, plain_sum.meta, plain_sum.num_warps)](
      partial, c, i32(s.m), i32(s.n), i32(slices), i32(s.stride_cm), i32(s.stride_cn));
}

// Whether PyTorch's current stream is capturing a CUDA graph (nothing may be timed or compiled
// then). False where PyTorch has no CUDA.
bool capturing_cuda_graph() {
#if defined(TESSERA_TORCH_HAS_CUDA_STREAMS) && __has_include(<c10/cuda/CUDAGraphsC10Utils.h>)
  return c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None;
#else
  return false;
#endif
}

// Large 16-bit products on CUDA tensors are autotuned (ex::matmul_autotune_configs, Triton's way):
// the first call of each shape and layout times 8 configs (about a second), and the winner is
// kept in memory and in tessera's disk cache, so a later process does not tune again. Below
// 2^30 multiply-adds the fixed config is within a few percent and tuning would not pay for itself;
// TESSERA_TORCH_AUTOTUNE=0 turns tuning off. Under CUDA graph capture a shape not tuned yet takes
// the fixed config (nothing can be timed while capturing).
bool autotunes(const ex::MatmulShape& s, ts::Executor executor) {
  static const bool enabled = [] {
    const char* v = std::getenv("TESSERA_TORCH_AUTOTUNE");
    return v == nullptr || std::string_view(v) != "0";
  }();
  return enabled && executor == ts::Executor::Cuda && s.m * s.n * s.k >= (std::int64_t{1} << 30);
}

template <class T, ts::InputPrecision P>
void launch_matmul(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
  static auto k = ex::make_matmul<T, T, P>(kernel_name<T>(is_tf32(T{}, P) ? "matmul_tf32" : "matmul").c_str());
  const ex::MatmulShape s{a.size(0), b.size(1), a.size(1), a.stride(0), a.stride(1),
                          b.stride(0), b.stride(1), c.stride(0), c.stride(1)};
  const ex::MatmulConfig cfg = config_for(s.m, s.n, a.scalar_type());
  const ts::LaunchOptions opts = tile_options(a, s, cfg);
  const ex::MatmulConfig split_cfg = split_k_config(cfg, a.scalar_type());
  if (const std::int64_t slices = slices_for(s, split_cfg, executor_of(a)); slices > 1)
    return launch_split_k<T, P>(a, b, c, s, split_cfg, slices, tile_options(a, s, split_cfg));
  if constexpr (!std::is_same_v<T, float>) {  // f32's larger tiles do not fit: its fixed config stays
    if (autotunes(s, executor_of(a))) {
      // Keyed by the sizes and the operands' strides (the layouts of the backward's transposed views).
      static auto tuned = ts::autotune(k, ex::matmul_autotune_configs(),
                                       {.key = {{3, "m"}, {4, "n"}, {5, "k"}, {6, "stride_am"}, {7, "stride_ak"},
                                                {8, "stride_bk"}, {9, "stride_bn"}}});
      ts::LaunchOptions base = opts;
      base.grid = ex::matmul_grid(s);
      base.meta = {};
      const auto launch = tuned[base];
      const bool ready = std::apply([&](auto... scalars) { return !capturing_cuda_graph() || launch.best_config(a, b, c, scalars...); },
                                    ex::matmul_scalars(s));
      if (ready) return std::apply([&](auto... scalars) { launch(a, b, c, scalars...); }, ex::matmul_scalars(s));
    }
  }
  std::apply([&](auto... scalars) { k[opts](a, b, c, scalars...); }, ex::matmul_scalars(s));
}

}  // namespace

at::Tensor matmul_fwd(const at::Tensor& a, const at::Tensor& b) {
  check_matmul_inputs(a, b);
  at::Tensor c = at::empty({a.size(0), b.size(1)}, a.options());
  if (c.numel() == 0) return c;
  if (a.size(1) == 0) return c.zero_();
  dispatch_float(a.scalar_type(), "matmul", [&]<class T>(T) {
    if constexpr (std::is_same_v<T, float>) {
      if (at::globalContext().allowTF32CuBLAS()) launch_matmul<float, ts::InputPrecision::tf32>(a, b, c);
      else launch_matmul<float, ts::InputPrecision::ieee>(a, b, c);
    } else {
      launch_matmul<T, ts::InputPrecision::tf32>(a, b, c);  // the precision applies to f32 only
    }
  });
  return c;
}

at::Tensor matmul_fwd_meta(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2, "tessera::matmul: takes 2-D tensors, got a of shape ", a.sym_sizes(),
              " and b of shape ", b.sym_sizes());
  check_float_dtype(a, "matmul", "a");
  check_same_dtype(a, b, "matmul", "b");
  TORCH_CHECK(a.sym_size(1) == b.sym_size(0), "tessera::matmul: a's columns must equal b's rows, got ",
              a.sym_sizes(), " and ", b.sym_sizes());
  return at::empty_symint({a.sym_size(0), b.sym_size(1)}, a.options());
}

}  // namespace tessera::torch_ops

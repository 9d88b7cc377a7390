// tessera matmul on a CUDA GPU (examples/matmul_kernels.hpp), TFLOP/s per shape and block
// configuration, timed as triton.testing.do_bench times (an L2-flushing memset before each run,
// median of the repetitions). Each case is checked once before it is timed: 256 sampled elements
// of C against a double-precision host dot product, |got - want| <= 2e-2 * (1 + |want|) / (bf16,
// f16 outputs round to 8 / 11 bits, tf32 operands to 11; int8 sums are exact). Prints one line per (shape, config) and exits 3 when a check
// failed. Last, the fused epilogue (bias + GELU, cast to bf16) at bf16 8192^3. tests/bench/matmul_ref.py
// is Triton's, cuBLAS's and torch.compile's side.
//   tessera_bench_matmul            TFLOP/s per shape and configuration
//   tessera_bench_matmul compile    cold compile and autotuning times (fresh TESSERA_CACHE_DIR)
//   tessera_bench_matmul bias_gelu  the fused epilogue's case alone
//   tessera_bench_matmul one DTYPE M N K BM BN BK WARPS STAGES [LAYOUT]
//                                   one shape (bf16, fp16, tf32: f32 operands multiplied as tf32,
//                                   int8: i32 output) and one configuration, for a profiler
//   tessera_bench_matmul ptx DTYPE M N K BM BN BK WARPS STAGES ARCH [LAYOUT]   (DTYPE bias_gelu: the fused kernel)
//                                   that kernel's PTX for ARCH (sm_80, sm_90a) on stdout, no GPU
//                                   needed (ptxas -v on it gives the registers the GPU would use)
// LAYOUT: nn (default), tn, nt or tt: A, then B, row-major (n) or column-major (t); tn is the
// layout of dB = Aᵀ·dC in a matmul's backward pass, nt that of dA = dC·Bᵀ.
#include <tessera/tessera.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "backends/cuda/cuda_driver.hpp"
#include "examples/matmul_kernels.hpp"
#include "tests/bench/bench_check.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;

namespace {

// The shape with strides for LAYOUT (see the file comment); a column-major operand is the
// transpose of a row-major one.
ex::MatmulShape shape_of(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& layout) {
  if (layout != "nn" && layout != "tn" && layout != "nt" && layout != "tt")
    throw ts::Error("bench_matmul: layout " + layout + " is not nn, tn, nt or tt");
  ex::MatmulShape s{m, n, k, k, 1, n, 1, n, 1};
  if (layout[0] == 't') s.stride_am = 1, s.stride_ak = m;
  if (layout[1] == 't') s.stride_bk = 1, s.stride_bn = k;
  return s;
}

using bench::time_ms;  // do_bench-style timing, shared with bench.cpp (bench_check.hpp)

int g_failed = 0;

// The block configurations timed per shape: Triton's tutorial configs (tests/bench/matmul_ref.py's
// CONFIGS) and three more of tessera's.
ex::MatmulConfig cfg_of(std::int64_t bm, std::int64_t bn, std::int64_t bk, int warps, int stages) {
  return ex::MatmulConfig{.block_m = bm, .block_n = bn, .block_k = bk, .group_m = 8, .num_warps = warps, .num_stages = stages};
}
const std::vector<ex::MatmulConfig> kConfigs = {
    cfg_of(128, 256, 64, 8, 3), cfg_of(64, 256, 32, 4, 4),  cfg_of(128, 128, 32, 4, 4), cfg_of(128, 64, 32, 4, 4),
    cfg_of(64, 128, 32, 4, 4),  cfg_of(128, 128, 64, 8, 3), cfg_of(128, 128, 32, 8, 1), cfg_of(128, 128, 64, 8, 1),
    cfg_of(64, 128, 32, 4, 1),  cfg_of(128, 128, 64, 4, 3), cfg_of(128, 256, 32, 8, 4), cfg_of(128, 256, 64, 8, 4)};

// C's element type for operands of T: T for half and bfloat16, float for float (tf32), int32_t for
// int8_t, as Triton's side stores them.
template <class T>
using output_t = std::conditional_t<std::is_same_v<T, std::int8_t>, std::int32_t, T>;

using bench::random_operand;

std::string config_name(const ex::MatmulConfig& cfg) {
  return std::to_string(cfg.block_m) + "x" + std::to_string(cfg.block_n) + "x" + std::to_string(cfg.block_k) + "/w" +
         std::to_string(cfg.num_warps) + "/s" + std::to_string(cfg.num_stages);
}

// 256 sampled elements (i, j) of an m x n output: got(i, j) against want(i, j), within `relative`
// * (1 + |want|) (0: exact). Prints the first three failures; returns how many failed.
template <class Got, class Want>
int sampled_check(const std::string& label, std::int64_t m, std::int64_t n, double relative, Got got, Want want) {
  int bad = 0;
  std::mt19937 pick(5);
  for (int t = 0; t < 256; ++t) {
    const std::int64_t i = static_cast<std::int64_t>(pick() % static_cast<std::uint32_t>(m));
    const std::int64_t j = static_cast<std::int64_t>(pick() % static_cast<std::uint32_t>(n));
    const double g = got(i, j), w = want(i, j);
    if (!(std::abs(g - w) <= relative * (1 + std::abs(w))) && bad++ < 3)
      std::fprintf(stderr, "CHECK FAILED %s: C[%lld,%lld] = %g, want %g\n", label.c_str(), static_cast<long long>(i),
                   static_cast<long long>(j), g, w);
  }
  return bad;
}

// bench::time_configs at the FLOPs of an m x n x k product.
template <class RunOnce>
void time_configs(tessera::cuda::CudaDriver& drv, const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k,
                  const std::vector<ex::MatmulConfig>& configs, RunOnce run_once) {
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  g_failed += bench::time_configs(drv, name, flops, configs, config_name, run_once);
}

std::string shape_label(const char* what, std::int64_t m, std::int64_t n, std::int64_t k) {
  return std::string(what) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

template <class T>
void bench_shape(tessera::cuda::CudaDriver& drv, const char* dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                 const std::vector<ex::MatmulConfig>& configs = kConfigs, const std::string& layout = "nn") {
  using Out = output_t<T>;
  std::mt19937 rng(11);
  const std::vector<T> ha = random_operand<T>(static_cast<std::size_t>(m * k), rng);
  const std::vector<T> hb = random_operand<T>(static_cast<std::size_t>(k * n), rng);
  auto a = ts::Buffer<T>::from_host(ha);
  auto b = ts::Buffer<T>::from_host(hb);
  ts::Buffer<Out> c(static_cast<std::size_t>(m * n));
  static auto matmul = ex::make_matmul<T, Out>("matmul");
  const ex::MatmulShape s = shape_of(m, n, k, layout);
  const std::string name = shape_label(dtype, m, n, k) + (layout == "nn" ? "" : " " + layout);
  time_configs(drv, name, m, n, k, configs, [&](const ex::MatmulConfig& cfg, const std::string& label) {
    auto launch = [&, cfg] {
      std::apply([&](auto... sc) { matmul[ex::matmul_options(s, cfg)](a, b, c, sc...); }, ex::matmul_scalars(s));
    };
    drv.memset_d8(reinterpret_cast<tessera::cuda::CUdeviceptr>(c.data()), 0xff, c.size() * sizeof(Out));  // NaN poison
    launch();
    drv.context_synchronize();
    const auto got = c.to_host();
    auto want = [&](std::int64_t i, std::int64_t j) {
      double sum = 0;
      for (std::int64_t p = 0; p < k; ++p)
        sum += static_cast<double>(static_cast<float>(ha[i * s.stride_am + p * s.stride_ak])) *
               static_cast<double>(static_cast<float>(hb[p * s.stride_bk + j * s.stride_bn]));
      return sum;
    };
    auto got_at = [&](std::int64_t i, std::int64_t j) {
      if constexpr (std::is_integral_v<Out>) return static_cast<double>(got[i * n + j]);
      else return static_cast<double>(static_cast<float>(got[i * n + j]));
    };
    const double relative = std::is_integral_v<Out> ? 0.0 : 2e-2;  // int sums are exact
    return std::make_pair(std::function<void()>(launch), sampled_check(label, m, n, relative, got_at, want));
  });
}

// The fused epilogue of examples/matmul_kernels.hpp: C = bf16(GELU(A·B + bias)), bf16 operands, f32
// bias, GELU with erf as torch's default. tests/bench/matmul_ref.py times the same product in
// Triton (the tutorial kernel with this epilogue), eager torch and torch.compile.
void bench_bias_gelu(tessera::cuda::CudaDriver& drv, std::int64_t m, std::int64_t n, std::int64_t k) {
  std::mt19937 rng(11);
  const auto ha = random_operand<ts::bfloat16>(static_cast<std::size_t>(m * k), rng);
  const auto hb = random_operand<ts::bfloat16>(static_cast<std::size_t>(k * n), rng);
  const auto hbias = random_operand<float>(static_cast<std::size_t>(n), rng);
  auto a = ts::Buffer<ts::bfloat16>::from_host(ha), b = ts::Buffer<ts::bfloat16>::from_host(hb);
  auto bias = ts::Buffer<float>::from_host(hbias);
  ts::Buffer<ts::bfloat16> c(static_cast<std::size_t>(m * n));
  static auto kernel = ex::make_matmul_bias_gelu<ts::bfloat16>();
  const ex::MatmulShape s{m, n, k, k, 1, n, 1, n, 1};
  time_configs(drv, shape_label("bias_gelu bf16", m, n, k), m, n, k, kConfigs,
               [&](const ex::MatmulConfig& cfg, const std::string& label) {
    auto launch = [&, cfg] {
      std::apply([&](auto... sc) { kernel[ex::matmul_options(s, cfg)](a, b, bias, c, sc...); }, ex::matmul_scalars(s));
    };
    drv.memset_d8(reinterpret_cast<tessera::cuda::CUdeviceptr>(c.data()), 0xff, c.size() * sizeof(ts::bfloat16));
    launch();
    drv.context_synchronize();
    const auto got = c.to_host();
    auto want = [&](std::int64_t i, std::int64_t j) {
      double x = hbias[j];
      for (std::int64_t p = 0; p < k; ++p)
        x += static_cast<double>(static_cast<float>(ha[i * k + p])) * static_cast<double>(static_cast<float>(hb[p * n + j]));
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    };
    auto got_at = [&](std::int64_t i, std::int64_t j) { return static_cast<double>(static_cast<float>(got[i * n + j])); };
    return std::make_pair(std::function<void()>(launch), sampled_check(label, m, n, 2e-2, got_at, want));
  });
}

// Cold compile of the bf16 matmul (its first call with an empty disk cache, after the context
// and after the compiler's one-time start-up), then autotuning the 8 configurations of
// ex::matmul_autotune_configs() with a fresh autotuner (compiles in parallel, times each): wall
// time from the call to the end of the launch it makes. Run with TESSERA_CACHE_DIR set to an
// empty folder and CUDA_CACHE_DISABLE=1.
void bench_compile_and_autotune(tessera::cuda::CudaDriver& drv) {
  using Clock = std::chrono::steady_clock;
  const std::int64_t m = 4096, n = 4096, k = 4096;
  std::vector<ts::bfloat16> h(static_cast<std::size_t>(m * k), ts::bfloat16(0.5f));
  auto a = ts::Buffer<ts::bfloat16>::from_host(h), b = ts::Buffer<ts::bfloat16>::from_host(h);
  ts::Buffer<ts::bfloat16> c(static_cast<std::size_t>(m * n));
  const ex::MatmulShape s{m, n, k, k, 1, n, 1, n, 1};
  {  // the compiler's one-time start-up, on an unrelated kernel
    auto warm = ex::make_matmul<ts::half, ts::half>("warm_up");
    ts::Buffer<ts::half> x(256), y(256);
    const ex::MatmulShape ws{16, 16, 16, 16, 1, 16, 1, 16, 1};
    ex::MatmulConfig cfg{.block_m = 16, .block_n = 16, .block_k = 16, .group_m = 1, .num_warps = 4, .num_stages = 1};
    std::apply([&](auto... sc) { warm[ex::matmul_options(ws, cfg)](x, x, y, sc...); }, ex::matmul_scalars(ws));
    drv.context_synchronize();
  }
  auto cold = ex::make_matmul<ts::bfloat16, ts::bfloat16>("matmul_cold");
  auto t0 = Clock::now();
  std::apply([&](auto... sc) { cold[ex::matmul_options(s, {})](a, b, c, sc...); }, ex::matmul_scalars(s));
  drv.context_synchronize();
  const double cold_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  std::printf("tessera bf16 matmul cold first call (compile + load + run, empty caches): %.1f ms\n", cold_ms);
  auto tuned_kernel = ex::make_matmul<ts::bfloat16, ts::bfloat16>("matmul_tuned");
  auto tuned = ts::autotune(tuned_kernel, ex::matmul_autotune_configs(), {.key = {{3, "m"}, {4, "n"}, {5, "k"}}});
  t0 = Clock::now();
  std::apply([&](auto... sc) { tuned[{.grid = ex::matmul_grid(s)}](a, b, c, sc...); }, ex::matmul_scalars(s));
  drv.context_synchronize();
  const double tune_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::string best = "?";
  std::apply([&](auto... sc) {
    if (auto cfg = tuned[{.grid = ex::matmul_grid(s)}].best_config(a, b, c, sc...)) best = cfg->str();
  }, ex::matmul_scalars(s));
  std::printf("tessera autotune 8 matmul configs (bf16 4096^3, empty caches): %.2f s, best %s\n", tune_s, best.c_str());
  // Checked: every element of 0.5 * 0.5 summed 4096 times is 1024, exactly representable.
  const auto got = c.to_host();
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); i += 997) bad += static_cast<float>(got[i]) != 1024.0f;
  std::printf("autotuned result check %s\n", bad ? "FAILED" : "ok");
  if (bad) ++g_failed;
}

// Writes the PTX of `kernel` compiled for `arch` without a GPU, for shape `s` and `cfg`, to stdout.
// Host buffers aligned as the device's allocations are (16 bytes and more) give the same
// specialization.
template <class Kernel, class... Buffers>
int write_ptx(Kernel& kernel, const std::string& arch, const ex::MatmulShape& s, const ex::MatmulConfig& cfg,
              Buffers... buffers) {
  const auto art = std::apply([&](auto... sc) { return kernel.warmup(arch, ex::matmul_options(s, cfg), buffers..., sc...); },
                              ex::matmul_scalars(s));
  std::fwrite(art.data.data(), 1, art.data.size(), stdout);
  return 0;
}

// The PTX `one` would run.
template <class T>
int print_ptx(const std::string& arch, std::int64_t m, std::int64_t n, std::int64_t k, const ex::MatmulConfig& cfg,
              const std::string& layout) {
  static auto matmul = ex::make_matmul<T, output_t<T>>("matmul");
  std::vector<T> a(16), b(16);
  std::vector<output_t<T>> c(16);
  return write_ptx(matmul, arch, shape_of(m, n, k, layout), cfg, std::span<T>(a), std::span<T>(b), std::span<output_t<T>>(c));
}

// The fused epilogue's kernel (bench_bias_gelu).
int print_bias_gelu_ptx(const std::string& arch, std::int64_t m, std::int64_t n, std::int64_t k,
                        const ex::MatmulConfig& cfg) {
  static auto kernel = ex::make_matmul_bias_gelu<ts::bfloat16>();
  std::vector<ts::bfloat16> a(16), b(16), c(16);
  std::vector<float> bias(16);
  return write_ptx(kernel, arch, ex::MatmulShape{m, n, k, k, 1, n, 1, n, 1}, cfg, std::span<ts::bfloat16>(a),
                   std::span<ts::bfloat16>(b), std::span<float>(bias), std::span<ts::bfloat16>(c));
}

}  // namespace

int main(int argc, char** argv) {
  if ((argc == 12 || argc == 13) && std::string(argv[1]) == "ptx") {
    const std::string dtype = argv[2], layout = argc == 13 ? argv[12] : "nn";
    auto num = [&](int i) { return std::stoll(argv[i]); };
    const auto cfg = cfg_of(num(6), num(7), num(8), static_cast<int>(num(9)), static_cast<int>(num(10)));
    try {
      if (dtype == "bf16") return print_ptx<ts::bfloat16>(argv[11], num(3), num(4), num(5), cfg, layout);
      if (dtype == "fp16") return print_ptx<ts::half>(argv[11], num(3), num(4), num(5), cfg, layout);
      if (dtype == "tf32") return print_ptx<float>(argv[11], num(3), num(4), num(5), cfg, layout);
      if (dtype == "int8") return print_ptx<std::int8_t>(argv[11], num(3), num(4), num(5), cfg, layout);
      if (dtype == "bias_gelu") return print_bias_gelu_ptx(argv[11], num(3), num(4), num(5), cfg);
      return std::fprintf(stderr, "bench_matmul ptx: dtype %s is not bf16, fp16, tf32, int8 or bias_gelu\n", dtype.c_str()), 2;
    } catch (const ts::Error& e) {
      std::fprintf(stderr, "bench_matmul: %s\n", e.what());
      return 1;
    }
  }
  if (argc > 1 && std::string(argv[1]) == "compile") {
    try {
      auto& drv = tessera::cuda::CudaDriver::require();
      drv.ensure_context();
      bench_compile_and_autotune(drv);
    } catch (const ts::Error& e) {
      std::fprintf(stderr, "bench_matmul: %s\n", e.what());
      return 1;
    }
    return g_failed ? 3 : 0;
  }
  if ((argc == 11 || argc == 12) && std::string(argv[1]) == "one") {
    const std::string dtype = argv[2], layout = argc == 12 ? argv[11] : "nn";
    auto num = [&](int i) { return std::stoll(argv[i]); };
    const std::vector<ex::MatmulConfig> one{cfg_of(num(6), num(7), num(8), static_cast<int>(num(9)), static_cast<int>(num(10)))};
    try {
      auto& drv = tessera::cuda::CudaDriver::require();
      drv.ensure_context();
      if (dtype == "bf16") bench_shape<ts::bfloat16>(drv, "bf16", num(3), num(4), num(5), one, layout);
      else if (dtype == "fp16") bench_shape<ts::half>(drv, "fp16", num(3), num(4), num(5), one, layout);
      else if (dtype == "tf32") bench_shape<float>(drv, "tf32", num(3), num(4), num(5), one, layout);
      else if (dtype == "int8") bench_shape<std::int8_t>(drv, "int8", num(3), num(4), num(5), one, layout);
      else return std::fprintf(stderr, "bench_matmul one: dtype %s is not bf16, fp16, tf32 or int8\n", dtype.c_str()), 2;
    } catch (const ts::Error& e) {
      std::fprintf(stderr, "bench_matmul: %s\n", e.what());
      return 1;
    }
    return g_failed ? 3 : 0;
  }
  const bool fused_only = argc == 2 && std::string(argv[1]) == "bias_gelu";
  try {
    auto& drv = tessera::cuda::CudaDriver::require();
    drv.ensure_context();
    if (fused_only) {
      bench_bias_gelu(drv, 8192, 8192, 8192);
      return g_failed ? 3 : 0;
    }
    bench_shape<ts::bfloat16>(drv, "bf16", 4096, 4096, 4096);
    bench_shape<ts::bfloat16>(drv, "bf16", 8192, 8192, 8192);
    bench_shape<ts::half>(drv, "fp16", 8192, 8192, 8192);
    bench_shape<ts::bfloat16>(drv, "bf16", 8192, 8192, 512);
    bench_shape<ts::bfloat16>(drv, "bf16", 16384, 1024, 1024);
    // The backward pass's products: dB = Aᵀ·dC (A column-major) and dA = dC·Bᵀ (B column-major).
    bench_shape<ts::bfloat16>(drv, "bf16", 4096, 4096, 4096, kConfigs, "tn");
    bench_shape<ts::bfloat16>(drv, "bf16", 4096, 4096, 4096, kConfigs, "nt");
    bench_shape<float>(drv, "tf32", 4096, 4096, 4096);
    bench_shape<std::int8_t>(drv, "int8", 8192, 8192, 8192);
    bench_bias_gelu(drv, 8192, 8192, 8192);
  } catch (const ts::Error& e) {
    std::fprintf(stderr, "bench_matmul: %s\n", e.what());
    return 1;
  }
  return g_failed ? 3 : 0;
}

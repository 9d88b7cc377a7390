// tessera attention forward on a CUDA GPU (examples/attention_kernels.hpp), TFLOP/s per shape and
// configuration, timed as triton.testing.do_bench times (bench_check.hpp's time_ms). Each case is
// checked once before it is timed: 64 sampled rows of O against a double-precision host
// reference, |got - want| <= 4 units of the element type's rounding (|O| <= 1). FLOPs: 4·B·H·N²·D,
// half of it when causal, as FlashAttention and Triton's tutorial count them.
// tests/bench/attention_ref.py is torch's (SDPA) and Triton's side.
//   tessera_bench_attention                     every shape and configuration
//   tessera_bench_attention one DTYPE B H N D CAUSAL BM BN WARPS STAGES   (for a profiler)
//   tessera_bench_attention ptx DTYPE N D CAUSAL BM BN WARPS STAGES ARCH  PTX on stdout, no GPU
// Exits 3 when a check failed.
#include <tessera/tessera.hpp>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "backends/cuda/cuda_driver.hpp"
#include "examples/attention_kernels.hpp"
#include "tests/bench/bench_check.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;

namespace {

int g_failed = 0;

struct Shape {
  const char* dtype;
  std::int64_t batch, heads, n, d;
  bool causal;
};

// The shapes of DESIGN.md's SDPA figures on the H200.
const std::vector<Shape> kShapes = {{"fp16", 4, 32, 4096, 128, false},
                                    {"bf16", 4, 32, 4096, 128, true},
                                    {"fp16", 4, 32, 4096, 64, false}};

std::vector<ex::AttentionConfig> configs_for(std::int64_t d) {
  auto c = [](std::int64_t bm, std::int64_t bn, int warps, int stages) {
    return ex::AttentionConfig{.block_m = bm, .block_n = bn, .num_warps = warps, .num_stages = stages};
  };
  if (d > 64) return {c(128, 32, 8, 1), c(128, 32, 8, 2), c(128, 32, 8, 3), c(128, 64, 8, 2), c(128, 64, 8, 3), c(64, 64, 4, 2), c(64, 64, 4, 3)};
  return {c(128, 64, 8, 1), c(128, 64, 8, 2), c(128, 64, 8, 3), c(128, 128, 8, 2), c(64, 64, 4, 2)};
}

std::string config_name(const ex::AttentionConfig& c) {
  return std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "/w" + std::to_string(c.num_warps) + "/s" +
         std::to_string(c.num_stages);
}

template <class In>
void bench_shape(tessera::cuda::CudaDriver& drv, const Shape& s, const std::vector<ex::AttentionConfig>& configs) {
  const std::int64_t heads = s.batch * s.heads;
  const auto count = static_cast<std::size_t>(heads * s.n * s.d);
  std::mt19937 rng(13);
  const auto hq = bench::random_operand<In>(count, rng), hk = bench::random_operand<In>(count, rng),
             hv = bench::random_operand<In>(count, rng);
  auto q = ts::Buffer<In>::from_host(hq), k = ts::Buffer<In>::from_host(hk), v = ts::Buffer<In>::from_host(hv);
  ts::Buffer<In> o(count);
  static auto attention = ex::make_attention<In>();
  const float scale = 1.0f / std::sqrt(static_cast<float>(s.d));
  const std::string name = std::string(s.dtype) + " B" + std::to_string(s.batch) + " H" + std::to_string(s.heads) + " N" +
                           std::to_string(s.n) + " D" + std::to_string(s.d) + (s.causal ? " causal" : "");
  const double flops = 4.0 * static_cast<double>(heads) * static_cast<double>(s.n) * static_cast<double>(s.n) *
                       static_cast<double>(s.d) * (s.causal ? 0.5 : 1.0);
  const double eps = std::is_same_v<In, ts::bfloat16> ? 0x1p-8 : 0x1p-11;
  std::vector<std::pair<std::int64_t, std::int64_t>> rows;  // (head, row) sampled for the check
  for (int r = 0; r < 64; ++r) rows.push_back({static_cast<std::int64_t>(rng() % heads), static_cast<std::int64_t>(rng() % s.n)});
  g_failed += bench::time_configs(drv, name, flops, configs, config_name, [&](const ex::AttentionConfig& cfg, const std::string& label) {
    auto launch = [&, cfg] {
      attention[ex::attention_options(heads, s.n, s.d, s.causal, scale, cfg)](q, k, v, o, static_cast<std::int32_t>(s.n), scale);
    };
    drv.memset_d8(reinterpret_cast<tessera::cuda::CUdeviceptr>(o.data()), 0xff, count * sizeof(In));  // NaN poison
    launch();
    drv.context_synchronize();
    const auto got = o.to_host();
    int bad = 0;
    for (auto [h, i] : rows) {
      const auto want = ex::attention_reference_row<In>(hq, hk, hv, s.n, s.d, scale, s.causal, h, i);
      for (std::int64_t t = 0; t < s.d; ++t) {
        const double g = static_cast<double>(static_cast<float>(got[static_cast<std::size_t>((h * s.n + i) * s.d + t)]));
        if (!(std::abs(g - want[static_cast<std::size_t>(t)]) <= 4 * eps) && bad++ < 3)
          std::fprintf(stderr, "CHECK FAILED %s: O[%lld,%lld,%lld] = %g, want %g\n", label.c_str(), static_cast<long long>(h),
                       static_cast<long long>(i), static_cast<long long>(t), g, want[static_cast<std::size_t>(t)]);
      }
    }
    return std::make_pair(std::function<void()>(launch), bad);
  });
}

// bench_shape for the shape's element type.
void run_shape(tessera::cuda::CudaDriver& drv, const Shape& s, const std::vector<ex::AttentionConfig>& configs) {
  if (std::string(s.dtype) == "bf16") return bench_shape<ts::bfloat16>(drv, s, configs);
  if (std::string(s.dtype) == "fp16") return bench_shape<ts::half>(drv, s, configs);
  throw ts::Error(std::string("bench_attention: dtype ") + s.dtype + " is not fp16 or bf16");
}

// The PTX the GPU would run, compiled for `arch` without a GPU (host buffers stand in).
template <class In>
int print_ptx(const std::string& arch, std::int64_t n, std::int64_t d, bool causal, const ex::AttentionConfig& cfg) {
  static auto attention = ex::make_attention<In>();
  std::vector<In> q(16), k(16), v(16), o(16);
  const auto art = attention.warmup(arch, ex::attention_options(1, n, d, causal, 0.125f, cfg), std::span<In>(q), std::span<In>(k),
                                    std::span<In>(v), std::span<In>(o), static_cast<std::int32_t>(n), 0.125f);
  std::fwrite(art.data.data(), 1, art.data.size(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  auto num = [&](int i) { return std::stoll(argv[i]); };
  try {
    if (argc == 11 && std::string(argv[1]) == "ptx") {
      const ex::AttentionConfig cfg{.block_m = num(6), .block_n = num(7), .num_warps = static_cast<int>(num(8)),
                                    .num_stages = static_cast<int>(num(9))};
      const std::string dtype = argv[2];
      if (dtype == "bf16") return print_ptx<ts::bfloat16>(argv[10], num(3), num(4), num(5) != 0, cfg);
      if (dtype == "fp16") return print_ptx<ts::half>(argv[10], num(3), num(4), num(5) != 0, cfg);
      return std::fprintf(stderr, "bench_attention ptx: dtype %s is not fp16 or bf16\n", dtype.c_str()), 2;
    }
    auto& drv = tessera::cuda::CudaDriver::require();
    if (argc == 12 && std::string(argv[1]) == "one") {
      static const std::string dtype = argv[2];  // Shape keeps a pointer to it
      const Shape s{dtype.c_str(), num(3), num(4), num(5), num(6), num(7) != 0};
      run_shape(drv, s, {ex::AttentionConfig{.block_m = num(8), .block_n = num(9), .num_warps = static_cast<int>(num(10)),
                                         .num_stages = static_cast<int>(num(11))}});
    } else if (argc == 1) {
      for (const Shape& s : kShapes) run_shape(drv, s, configs_for(s.d));
    } else {
      std::fprintf(stderr, "usage: see tests/bench/bench_attention.cpp\n");
      return 2;
    }
  } catch (const ts::Error& e) {
    std::fprintf(stderr, "bench_attention: %s\n", e.what());
    return 1;
  }
  return g_failed ? 3 : 0;
}

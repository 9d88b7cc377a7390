// Autotuning wall time on a CUDA GPU: tessera's side of tests/bench/triton_autotune.py (the same
// kernels, sizes and 8 configs). Prints one JSON line per case, as compare.py reads them:
//   {"impl": "tessera", "name": "autotune_softmax_8_configs", "metric": "s", "value": ..., "best": "...",
//    "ok": true|false, "check": "..."}
//   autotune_<kernel>_8_configs  first call of a fresh autotuner, empty caches: compile all 8 in
//                                parallel, time each (do_bench budgets: 25 ms warm-up, 100 ms), launch
//   autotune_<kernel>_cached     first call of another fresh autotuner and kernel object (nothing
//                                in memory) with the disk cache that the first one filled
// The clock runs from the call to the end of the launch it makes. Excluded, on both sides: the
// CUDA context, buffers, and the compiler's one-time start-up (one unrelated kernel is compiled
// first). CUDA_CACHE_DISABLE=1 unless set otherwise, so that the driver's JIT cache hides nothing.
// After each tuning the outputs are poisoned with NaN, the tuned kernel runs once more (the best
// config) and its outputs are checked element by element (tests/bench/bench_check.hpp; bounds as
// in bench.cpp: softmax every row sums to 1 and sampled rows within 1e-4 relative, layer norm every
// element within 1e-3 * (|want| + rms(want)), mean and rstd within 1e-4 relative). A failed check
// marks the line "ok": false and the program exits 3 after the other cases.
#include <tessera/tessera.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/cuda/cuda_driver.hpp"
#include "examples/kernels.hpp"
#include "examples/norm_kernels.hpp"
#include "tests/bench/bench_check.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::int64_t kRows = 8192, kCols = 4096;

// BLOCK 4096 (the row) or 8192 (half masked), 4 to 32 warps: all valid for both kernels.
std::vector<ts::Config> eight_configs() {
  std::vector<ts::Config> c;
  for (std::int64_t block : {4096, 8192})
    for (int warps : {4, 8, 16, 32}) c.push_back({.meta = {{"BLOCK", block}}, .num_warps = warps});
  return c;
}

int g_failed = 0;  // cases that failed their check or could not run

void emit(const std::string& name, double seconds, const std::string& best, const bench::Check& check) {
  char v[64];
  if (std::isfinite(seconds)) std::snprintf(v, sizeof v, "%.4f", seconds);
  else std::snprintf(v, sizeof v, "null");
  std::printf("{\"impl\": \"tessera\", \"name\": \"%s\", \"metric\": \"s\", \"value\": %s, \"best\": \"%s\", \"ok\": %s, "
              "\"check\": \"%s\"}\n",
              name.c_str(), v, bench::json_escape(best).c_str(), check.ok ? "true" : "false",
              bench::json_escape(check.detail).c_str());
  std::fflush(stdout);
  if (!check.ok) ++g_failed;
}

// Seconds from the call of `first_call` to the end of the GPU work it queued.
template <class F>
double wall_seconds(const ts::cuda::CudaDriver& drv, F&& first_call) {
  const auto t0 = Clock::now();
  first_call();
  drv.context_synchronize();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Tunes `make()`'s kernel twice (empty caches, then disk cache only); after each, poisons the
// outputs, runs the tuned kernel once more and checks what it wrote.
template <class Make, class Run, class Poison, class CheckFn>
void bench_kernel(const ts::cuda::CudaDriver& drv, const std::string& name, Make make, int key_index,
                  const char* key_name, Run run, Poison poison_outputs, CheckFn check) {
  for (const char* suffix : {"_8_configs", "_cached"}) {
    bench::Check c{"autotune_" + name + suffix};
    double s = NAN;
    std::string best = "?";
    try {
      auto kernel = make();
      auto tuned = ts::autotune(kernel, eight_configs(), {.key = {{key_index, key_name}}});
      const ts::LaunchOptions opts{.grid = {kRows}};
      s = wall_seconds(drv, [&] { run(tuned[opts]); });
      run([&](auto&&... args) {
        if (auto cfg = tuned[opts].best_config(args...)) best = cfg->str();
      });
      poison_outputs();
      run(tuned[opts]);
      drv.context_synchronize();
      check(c);
    } catch (const ts::Error& e) {
      c.fail(std::string("could not run: ") + e.what());
    }
    emit(c.case_name, s, best, c);
  }
}

void bench_softmax(const ts::cuda::CudaDriver& drv) {
  std::vector<float> h(static_cast<std::size_t>(kRows * kCols));
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>((i * 2654435761u) % 1000) * 1e-3f;
  auto x = ts::Buffer<float>::from_host(h);
  ts::Buffer<float> out(h.size());
  const auto c = static_cast<std::int32_t>(kCols);
  auto run = [&](auto&& launch) { launch(x, out, c, c); };
  auto poison = [&] { bench::poison(drv, out); };
  auto check = [&](bench::Check& check) { bench::check_softmax(check, h, out.to_host(), kRows, kCols); };
  bench_kernel(drv, "softmax", ex::make_softmax, 3, "n_cols", run, poison, check);
}

void bench_layer_norm(const ts::cuda::CudaDriver& drv) {
  std::vector<ts::half> hx(static_cast<std::size_t>(kRows * kCols)), hw(kCols), hb(kCols);
  for (std::size_t i = 0; i < hx.size(); ++i) hx[i] = ts::half(static_cast<float>((i * 2654435761u) % 1000) * 1e-3f);
  for (std::int64_t i = 0; i < kCols; ++i)
    hw[i] = ts::half(1.0f + static_cast<float>(i % 7) * 0.125f), hb[i] = ts::half(0.25f - static_cast<float>(i % 5) * 0.125f);
  auto x = ts::Buffer<ts::half>::from_host(hx), w = ts::Buffer<ts::half>::from_host(hw), b = ts::Buffer<ts::half>::from_host(hb);
  ts::Buffer<ts::half> y(hx.size());
  ts::Buffer<float> mean(kRows), rstd(kRows);
  const auto c = static_cast<std::int32_t>(kCols);
  auto run = [&](auto&& launch) { launch(x, y, w, b, mean, rstd, c, c, 1e-5f); };
  auto poison = [&] {
    bench::poison(drv, y);
    bench::poison(drv, mean);
    bench::poison(drv, rstd);
  };
  std::vector<float> want(hx.size()), want_mean(kRows), want_rstd(kRows);
  ex::layer_norm_reference(hx, hw, hb, want, kRows, kCols, 1e-5f);
  ex::layer_norm_stats(hx, want_mean, want_rstd, kRows, kCols, 1e-5f);
  auto check = [&](bench::Check& check) {
    bench::expect_close(check, "y", y.to_host(), want, kCols, 1e-3, 0, 1e-3);
    bench::expect_close(check, "mean", mean.to_host(), want_mean, 1, 1e-4, 1e-6);
    bench::expect_close(check, "rstd", rstd.to_host(), want_rstd, 1, 1e-4, 1e-6);
  };
  bench_kernel(drv, "layer_norm", ex::make_layer_norm_fwd, 7, "n", run, poison, check);
}

}  // namespace

int main() {
  ::setenv("CUDA_CACHE_DISABLE", "1", 0);  // read by cuInit: before the driver starts
  // A fresh cache folder, before anything reads TESSERA_CACHE_DIR: the first tuning is cold.
  std::string dir = (std::filesystem::temp_directory_path() / "tessera_bench_autotune_XXXXXX").string();
  if (!::mkdtemp(dir.data())) {
    std::perror("bench_autotune: mkdtemp");
    return 1;
  }
  ::setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
  int rc = 0;
  try {
    auto& drv = ts::cuda::CudaDriver::require();
    drv.ensure_context();
    {
      // The compiler's start-up, outside the clock (Triton's side compiles add_kernel first too).
      const std::int32_t n = 1 << 20;
      ts::Buffer<float> a(n), b(n), out(n);
      ex::make_vector_add()[ex::vector_add_options(n)](a, b, out, n);
      drv.context_synchronize();
    }
    bench_softmax(drv);
    bench_layer_norm(drv);
  } catch (const ts::Error& e) {
    std::fprintf(stderr, "bench_autotune: %s\n", e.what());
    rc = 1;
  }
  std::filesystem::remove_all(dir);
  if (g_failed > 0) {
    std::fprintf(stderr, "bench_autotune: %d case(s) FAILED their correctness check (\"ok\": false)\n", g_failed);
    if (rc == 0) rc = 3;
  }
  return rc;
}

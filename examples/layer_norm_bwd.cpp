// Layer norm backward over f16 rows (Triton's tutorial 05): dX per row, and dW, dB as sums over all
// rows through per-program partial sums reduced by a second kernel. Checks all three against a host
// reference in double and prints a throughput.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "norm_kernels.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : 1555, cols = argc > 2 ? std::atoll(argv[2]) : 1000;
  const float eps = 1e-5f;
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.5f, 2.f);
  std::vector<ts::half> hx(static_cast<std::size_t>(rows * cols)), hdy(hx.size()), hw(cols);
  for (auto& v : hx) v = ts::half(dist(rng));
  for (auto& v : hdy) v = ts::half(dist(rng));
  for (auto& v : hw) v = ts::half(dist(rng));
  std::vector<float> hmean(rows), hrstd(rows);
  ex::layer_norm_stats(hx, hmean, hrstd, rows, cols, eps);
  try {
    std::printf("tessera layer norm backward %lld x %lld (f16), running on: %s\n", static_cast<long long>(rows),
                static_cast<long long>(cols), ts::default_executor().description.c_str());
    const std::int64_t programs = ex::norm_bwd_programs(rows);
    auto x = ts::Buffer<ts::half>::from_host(hx), dy = ts::Buffer<ts::half>::from_host(hdy),
         w = ts::Buffer<ts::half>::from_host(hw);
    auto mean = ts::Buffer<float>::from_host(hmean), rstd = ts::Buffer<float>::from_host(hrstd);
    ts::Buffer<ts::half> dx(hx.size()), dw(cols), db(cols);
    ts::Buffer<float> dw_partial(programs * cols), db_partial(programs * cols);
    auto dx_kernel = ex::make_layer_norm_bwd_dx();
    auto dwdb_kernel = ex::make_layer_norm_bwd_dwdb();
    const auto m = static_cast<std::int32_t>(rows), n = static_cast<std::int32_t>(cols);
    auto run = [&] {
      dx_kernel[ex::norm_bwd_dx_options(cols, programs)](x, dy, dx, w, mean, rstd, dw_partial, db_partial, n, m, n);
      dwdb_kernel[ex::partial_sum_options(cols)](dw_partial, db_partial, dw, db, static_cast<std::int32_t>(programs), n);
      ts::synchronize();
    };
    auto t0 = Clock::now();
    run();
    auto t1 = Clock::now();
    const int reps = ts::default_executor().executor == ts::Executor::Interpreter ? 1 : 20;
    for (int i = 0; i < reps; ++i) run();
    auto t2 = Clock::now();

    std::vector<double> rdx(hx.size()), rdw(cols), rdb(cols);
    ex::layer_norm_bwd_reference(hx, hdy, hw, hmean, hrstd, rdx, rdw, rdb, rows, cols);
    bool ok = true;
    auto check = [&](const char* what, const std::vector<ts::half>& got, const std::vector<double>& want) {
      const auto e = ex::compare<ts::half>(got, want, 2e-2);
      std::printf("%s %s: relative error %.3g (bound 1e-2), %lld elements off by more than 2e-2 (first %lld)\n",
                  e.ok(1e-2) ? "OK" : "FAILED", what, e.relative, static_cast<long long>(e.bad_elements),
                  static_cast<long long>(e.first_bad));
      ok = ok && e.ok(1e-2);
    };
    check("dx", dx.to_host(), rdx);
    check("dw", dw.to_host(), rdw);
    check("db", db.to_host(), rdb);
    const double first_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    const double ms = std::chrono::duration<double, std::milli>(t2 - t1).count() / reps;
    std::printf("first call (compile included) %.1f ms; then %.3f ms per backward pass, %.2f GB/s\n", first_ms, ms,
                ex::layer_norm_bwd_bytes(rows, cols) / (ms * 1e6));
    return ok ? 0 : 1;
  } catch (const ts::Error& e) {
    std::printf("tessera error: %s\n", e.what());
    return 1;
  }
}

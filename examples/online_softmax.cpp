// Online softmax over rows too long for one tile (f32): one pass over column blocks keeps a running
// max and a running sum, a second pass writes the normalized values. Checks itself against a host
// reference in double and prints a throughput.
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
  const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : 24, cols = argc > 2 ? std::atoll(argv[2]) : 65536 + 77;
  const std::int64_t block = argc > 3 ? std::atoll(argv[3]) : ex::kOnlineSoftmaxBlock;
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.f, 3.f);
  std::vector<float> hx(static_cast<std::size_t>(rows * cols));
  for (auto& v : hx) v = dist(rng);
  // A late maximum in some rows, so the running sum must be rescaled more than once.
  for (std::int64_t r = 0; r < rows; r += 3) hx[static_cast<std::size_t>(r * cols + cols - 1)] = 25.f;
  try {
    std::printf("tessera online softmax %lld x %lld (f32, BLOCK %lld), running on: %s\n", static_cast<long long>(rows),
                static_cast<long long>(cols), static_cast<long long>(block), ts::default_executor().description.c_str());
    auto x = ts::Buffer<float>::from_host(hx);
    auto out = ts::Buffer<float>::from_host(std::vector<float>(hx.size(), -1.0f));
    auto softmax = ex::make_online_softmax();
    const auto c = static_cast<std::int32_t>(cols);
    auto run = [&] {
      softmax[ex::online_softmax_options(rows, block)](x, out, c, c);
      ts::synchronize();
    };
    auto t0 = Clock::now();
    run();
    auto t1 = Clock::now();
    const int reps = ts::default_executor().executor == ts::Executor::Interpreter ? 1 : 20;
    for (int i = 0; i < reps; ++i) run();
    auto t2 = Clock::now();

    std::vector<double> ref(hx.size());
    ex::softmax_reference_f64(hx, ref, rows, cols);
    const auto got = out.to_host();
    double worst = 0;  // relative to each element, plus an absolute floor far below 1/cols
    for (std::size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, std::abs(got[i] - ref[i]) / (std::abs(ref[i]) + 1e-12));
    if (!(worst <= 1e-4)) worst = std::max(worst, 1.0);  // NaN: fail
    const double first_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    const double ms = std::chrono::duration<double, std::milli>(t2 - t1).count() / reps;
    std::printf("%s: worst relative error %.3g (bound 1e-4); first call (compile included) %.1f ms; then %.3f ms, "
                "%.2f GB/s\n",
                worst <= 1e-4 ? "OK" : "FAILED", worst, first_ms, ms, ex::online_softmax_bytes(rows, cols) / (ms * 1e6));
    return worst <= 1e-4 ? 0 : 1;
  } catch (const ts::Error& e) {
    std::printf("tessera error: %s\n", e.what());
    return 1;
  }
}

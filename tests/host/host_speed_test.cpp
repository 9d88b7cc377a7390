// How fast the host targets run the examples, against the interpreter: milliseconds per launch
// (after a first, compiling launch) and programs per second. Hidden from ctest ([.]): speed is
// reported (notes/NOTES.md), never asserted. Run: tessera_host_tests "[speed]".
#include <chrono>
#include <cstdio>

#include "examples/kernels.hpp"
#include "examples/norm_kernels.hpp"
#include "host_test_util.hpp"

using namespace host_test;
namespace ex = tessera_examples;

namespace {

// Milliseconds per call of `launch(executor)`, after one untimed call (the compile).
template <class Launch>
double ms_per_launch(ts::Executor e, Launch&& launch) {
  launch(e);
  int reps = 0;
  const auto t0 = std::chrono::steady_clock::now();
  double ms = 0;
  do {
    launch(e);
    ++reps;
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  } while (ms < 300 && reps < 50);
  return ms / reps;
}

template <class Launch>
void report(const char* name, std::int64_t programs, Launch&& launch) {
  enable_host();
  for (ts::Executor e : {ts::Executor::Host, ts::Executor::Host64, ts::Executor::Interpreter}) {
    const double ms = ms_per_launch(e, launch);
    std::printf("%-22s %-22s %9.2f ms per launch, %9.0f programs/s\n", name, executor_name(e), ms,
                static_cast<double>(programs) / (ms / 1e3));
  }
}

}  // namespace

TEST_CASE("speed of the host targets on the examples", "[.][speed]") {
  std::mt19937 rng(kSeed);
  const std::int64_t n = 1 << 20;
  const auto x = random_values<float>(n, rng, -1, 1), y = random_values<float>(n, rng, -1, 1);
  auto out = poisoned<float>(n);
  auto add = ex::make_vector_add();
  report("vector_add 2^20", ts::cdiv(n, ex::kVectorAddBlock),
         [&](ts::Executor e) { add[ex::vector_add_options(n, e)](x, y, out, static_cast<std::int32_t>(n)); });
  const auto hx = random_values<ts::half>(n, rng, -3, 3);
  auto hout = poisoned<ts::half>(n);
  auto elu = ex::make_fused_elu();
  report("fused_elu 2^20", ts::cdiv(n, ex::kFusedEluBlock),
         [&](ts::Executor e) { elu[ex::fused_elu_options(n, e)](hx, hout, 1.5f, -0.25f, static_cast<std::int32_t>(n)); });
  const std::int64_t rows = 256, cols = 4096;
  auto softmax = ex::make_softmax();
  report("softmax 256 x 4096", rows, [&](ts::Executor e) {
    softmax[ex::softmax_options(rows, cols, e)](x, out, static_cast<std::int32_t>(cols), static_cast<std::int32_t>(cols));
  });
  auto ln = ex::make_layer_norm_fwd();
  const auto w = random_values<ts::half>(cols, rng, 0.5, 1.5), b = random_values<ts::half>(cols, rng, -1, 1);
  std::vector<float> mean(rows), rstd(rows);
  report("layer_norm_fwd 256x4096", rows, [&](ts::Executor e) {
    ln[ex::layer_norm_options(rows, cols, e)](hx, hout, w, b, mean, rstd, static_cast<std::int32_t>(cols),
                                              static_cast<std::int32_t>(cols), 1e-5f);
  });
  SUCCEED();
}

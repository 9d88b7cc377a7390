// The autotuner on the GPU with its default timer (CUDA events, L2 flush, do_bench budgets, here
// shortened): reset_to_zero and restore_value through driver memsets and copies, a config that
// fails validation skipped, the device in the report, and the winner read back from disk.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include "compare.hpp"
#include "tests/autotune/autotune_test_util.hpp"

using namespace autotune_test;

namespace {

ts::LaunchOptions on_gpu(std::int64_t n) { return {.grid = grid_for(n), .executor = ts::Executor::Cuda}; }

std::vector<ts::Config> gpu_configs() {
  auto c = block_configs({256, 512, 1024});
  c.push_back({.meta = {{"BLOCK", 256}}, .num_warps = 3});  // fails launch validation
  return c;
}

}  // namespace

TEST_CASE("GPU autotune: reset_to_zero gives one run's sum, and a second autotuner reads the disk", "[gpu][autotune]") {
  TestEnv env;
  const std::int32_t n = (1 << 20) + 3;
  const auto hx = ramp(static_cast<std::size_t>(n));
  auto x = ts::Buffer<float>::from_host(hx, ts::Executor::Cuda);
  auto out = ts::Buffer<float>::from_host(std::vector<float>(hx.size(), 5.0f), ts::Executor::Cuda);
  auto acc = make_accumulate("gpu_autotune_reset");
  const ts::AutotuneOptions o{.key = {2}, .reset_to_zero = {1}, .warmup_ms = 1, .rep_ms = 5};
  auto tuned = ts::autotune(acc, gpu_configs(), o);
  tuned[on_gpu(n)](x, out, n);
  ts::synchronize(ts::Executor::Cuda);
  gpu_test::check_equal("sum after reset_to_zero", out.to_host(), hx);  // one add onto zero: exact

  const auto r = tuned[on_gpu(n)].tuning_report(x, out, n);
  REQUIRE(r);
  CHECK_THAT(r->device, Catch::Contains("sm_") && Catch::Contains("SMs"));
  REQUIRE(r->results.size() == 4);
  for (std::size_t i = 0; i < 3; ++i) CHECK(r->results[i].ms > 0);
  CHECK_THAT(r->results[3].error, Catch::Contains("num_warps"));
  CHECK(r->best_ms == std::min({r->results[0].ms, r->results[1].ms, r->results[2].ms}));

  auto again = ts::autotune(make_accumulate("gpu_autotune_reset"), gpu_configs(), o);
  const auto second = again[on_gpu(n)].tune(x, out, n);
  CHECK(second.from_disk);
  CHECK(second.best == r->best);
}

TEST_CASE("GPU autotune: restore_value undoes an in-place kernel's timing runs", "[gpu][autotune]") {
  TestEnv env;
  const std::int32_t n = 300000;
  const auto hx = ramp(static_cast<std::size_t>(n));
  auto x = ts::Buffer<float>::from_host(hx, ts::Executor::Cuda);
  auto tuned = ts::autotune(make_in_place("gpu_autotune_restore"), block_configs({256, 1024}),
                            {.key = {1}, .restore_value = {0}, .warmup_ms = 1, .rep_ms = 5});
  tuned[on_gpu(n)](x, n);
  ts::synchronize(ts::Executor::Cuda);
  std::vector<float> want(hx.size());
  for (std::size_t i = 0; i < hx.size(); ++i) want[i] = hx[i] * 2.0f + 1.0f;
  gpu_test::check_equal("in-place result after restore_value", x.to_host(), want);
}

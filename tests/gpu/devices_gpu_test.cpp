// Device and stream discipline on the GPU: a launch and an autotuning on one stream return while
// a long kernel still runs on another (nothing synchronizes behind the caller's back; a first
// module load does, in the driver, and is measured); DLPack CUDA tensors; and, on a machine with two GPUs ([multi_gpu]), one process
// launching one kernel on both devices: compiled once, loaded twice, results correct, the
// caller's current context left as it was, a launch mixing devices refused.
#include <catch2/catch.hpp>
#include <tessera/dlpack.hpp>
#include <tessera/tessera.hpp>

#include <chrono>
#include <vector>

#include "backends/cuda/cuda_driver.hpp"
#include "compare.hpp"

namespace ts = tessera;
namespace cu = tessera::cuda;

namespace {

// A single program that runs `iters` dependent multiply-adds: a kernel that keeps a stream busy.
// The recurrence depends on the counter, so no compiler can fold the loop away (one that settled
// on a fixed point, acc * 0.999999 + 1e-6 from 1, ran 2^24 iterations in under a millisecond).
auto make_spin() {
  return ts::kernel("spin", [](ts::Ptr<float> out, ts::Int iters) {
    auto acc = ts::zeros<float>({32}) + 1.0f;
    ts::for_range(0, iters, [&](ts::Int i) { acc = acc * 0.5f + i.to<float>(); });
    ts::store(out + ts::arange(0, 32), acc);
  });
}

float spin_reference(int iters) {
  float acc = 1.0f;
  for (int i = 0; i < iters; ++i) acc = acc * 0.5f + static_cast<float>(i);
  return acc;
}

auto make_scale(const char* name) {
  return ts::kernel(name, [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n, ts::Float alpha) {
    const int block = ts::meta("BLOCK");
    auto offs = ts::program_id(0) * block + ts::arange(0, block);
    auto mask = offs < n;
    ts::store(out + offs, ts::load(x + offs, mask) * alpha, mask);
  });
}

ts::LaunchOptions scale_options(int n, std::int64_t block, void* stream = nullptr) {
  return {.grid = {ts::cdiv(std::int64_t{n}, block)}, .meta = {{"BLOCK", block}}, .stream = stream};
}

std::vector<float> ramp(int n, float shift) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i % 101) - shift;
  return v;
}

std::vector<float> scaled(const std::vector<float>& x, float alpha) {
  std::vector<float> r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r[i] = x[i] * alpha;
  return r;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("GPU: launches and autotuning on one stream do not wait for another stream",
          "[gpu][runtime][streams]") {
  auto& drv = cu::CudaDriver::require();
  drv.ensure_context();
  const auto& f = drv.functions();
  // Blocking streams (flags 0): anything tessera queued on the legacy default stream, or a
  // device-wide synchronize, would wait for the spin kernel.
  cu::CUstream busy = nullptr, mine = nullptr;
  REQUIRE(f.cuStreamCreate(&busy, 0) == 0);
  REQUIRE(f.cuStreamCreate(&mine, 0) == 0);
  auto spin = make_spin();
  ts::Buffer<float> spin_out(32, ts::Executor::Cuda);
  // Calibrate: the spin's iterations for about two seconds (at most 2^31 - 1).
  const ts::LaunchOptions spin_opts{.grid = {1}, .num_warps = 1, .stream = busy};
  spin[spin_opts](spin_out, 1 << 20);
  drv.stream_synchronize(busy);
  REQUIRE(spin_out.to_host() == std::vector<float>(32, spin_reference(1 << 20)));
  auto t0 = std::chrono::steady_clock::now();
  spin[spin_opts](spin_out, 1 << 24);
  drv.stream_synchronize(busy);
  const double ms_per_iter = std::max(ms_since(t0), 1.0) / (1 << 24);
  const auto iters = static_cast<std::int32_t>(std::min(2000.0 / ms_per_iter, 2147483647.0));
  INFO("spin: " << ms_per_iter * 1e6 << " ns per iteration, " << iters << " iterations");

  const int n = 1 << 20;
  const auto hx = ramp(n, 30.0f);
  auto x = ts::Buffer<float>::from_host(hx, ts::Executor::Cuda);
  ts::Buffer<float> out(static_cast<std::size_t>(n), ts::Executor::Cuda);
  auto k = make_scale("streams_scale");
  k.warmup(scale_options(n, 1024, mine), x, out, n, 2.0f);
  // The autotuner's configs, compiled and loaded by a tuning for another key (n / 2): the tuning
  // below then times them, which must not wait for `busy` either.
  auto tuned = ts::autotune(make_scale("streams_tuned"),
                            {{.meta = {{"BLOCK", 256}}}, {.meta = {{"BLOCK", 1024}}}},
                            {.key = {2}, .reset_to_zero = {1}, .warmup_ms = 1, .rep_ms = 5});
  auto tuned_options = [&](int count) {
    return ts::LaunchOptions{.grid = ts::Grid([count](const ts::MetaValues& m) {
                               return ts::Dim3{static_cast<std::uint32_t>(ts::cdiv(std::int64_t{count}, m[0].second)), 1, 1};
                             }),
                             .stream = mine};
  };
  ts::Buffer<float> tuned_out(static_cast<std::size_t>(n), ts::Executor::Cuda);
  tuned[tuned_options(n / 2)](x, tuned_out, n / 2, 4.0f);
  drv.stream_synchronize(mine);

  spin[spin_opts](spin_out, iters);
  REQUIRE(!drv.stream_done(busy));  // the other stream is busy before tessera's launches
  t0 = std::chrono::steady_clock::now();
  k[scale_options(n, 1024, mine)](x, out, n, 2.0f);
  const double warm_launch_ms = ms_since(t0);
  CHECK(!drv.stream_done(busy));
  CHECK(warm_launch_ms < 50.0);

  // Autotuning on `mine` (timing runs, L2 flushes, reset_to_zero memsets between them).
  t0 = std::chrono::steady_clock::now();
  tuned[tuned_options(n)](x, tuned_out, n, 4.0f);
  const double tune_ms = ms_since(t0);
  CHECK(!drv.stream_done(busy));

  // A specialization not compiled yet: trace, compile, load and launch. Loading a module
  // (cuModuleLoadData) waits for the device's other work: the driver's, not tessera's; measured
  // here, not asserted (README: warm up before overlapping).
  t0 = std::chrono::steady_clock::now();
  k[scale_options(n, 256, mine)](x, out, n, 3.0f);
  const double cold_launch_ms = ms_since(t0);
  INFO("warm launch " << warm_launch_ms << " ms, autotune " << tune_ms << " ms, cold launch " << cold_launch_ms
                      << " ms, while the other stream was busy");
  drv.stream_synchronize(mine);
  drv.stream_synchronize(busy);
  gpu_test::check_equal("x * 3 on the caller's stream", out.to_host(), scaled(hx, 3.0f));
  gpu_test::check_equal("autotuned x * 4", tuned_out.to_host(), scaled(hx, 4.0f));
  WARN("streams: warm launch " << warm_launch_ms << " ms, autotune " << tune_ms << " ms, cold launch "
                               << cold_launch_ms << " ms, while another stream ran a " << iters * ms_per_iter
                               << " ms kernel");
  f.cuStreamDestroy(busy);
  f.cuStreamDestroy(mine);
}

TEST_CASE("GPU: DLPack CUDA tensors run on the GPU under Executor::Auto", "[gpu][runtime][dlpack]") {
  const int n = 100003;
  const auto hx = ramp(n, 50.0f);
  auto x = ts::Buffer<float>::from_host(hx, ts::Executor::Cuda);
  ts::Buffer<float> out(static_cast<std::size_t>(n), ts::Executor::Cuda);
  std::int64_t shape = n - 3;
  DLTensor tx{x.data(), {kDLCUDA, x.device()}, 1, {kDLFloat, 32, 1}, &shape, nullptr, 3 * sizeof(float)};
  DLTensor tout{out.data(), {kDLCUDA, out.device()}, 1, {kDLFloat, 32, 1}, &shape, nullptr, 0};
  auto k = make_scale("dlpack_gpu_scale");
  k[scale_options(n - 3, 1024)](&tx, &tout, n - 3, -2.0f);
  ts::synchronize(ts::Executor::Cuda);
  const auto got = out.to_host();
  std::vector<float> want(hx.begin() + 3, hx.end());
  gpu_test::check_equal("DLPack x[3:] * -2", std::vector<float>(got.begin(), got.end() - 3), scaled(want, -2.0f));
}

TEST_CASE("GPU: one kernel on two devices, compiled once and loaded twice", "[multi_gpu]") {
  auto& drv = cu::CudaDriver::require();
  if (drv.device_count() < 2) {
    WARN("one CUDA device: the two-device case needs the two-GPU machine (STEPS=multigpu)");
    return;
  }
  drv.ensure_context();
  const cu::CUcontext before = drv.current_context();
  const int n = (1 << 20) + 17;
  const auto h0 = ramp(n, 10.0f), h1 = ramp(n, 70.0f);
  auto x0 = ts::Buffer<float>::from_host(h0, ts::Executor::Cuda, 0);
  auto x1 = ts::Buffer<float>::from_host(h1, ts::Executor::Cuda, 1);
  ts::Buffer<float> out0(static_cast<std::size_t>(n), ts::Executor::Cuda, 0);
  ts::Buffer<float> out1(static_cast<std::size_t>(n), ts::Executor::Cuda, 1);
  REQUIRE(x1.device() == 1);
  auto k = make_scale("two_devices_scale");
  const auto compiles = ts::runtime_stats().compiles;
  k[scale_options(n, 1024)](x0, out0, n, 2.0f);  // device 0, from the buffers
  k[scale_options(n, 1024)](x1, out1, n, 5.0f);  // device 1, from the buffers
  CHECK(ts::runtime_stats().compiles == compiles + 1);
  CHECK(drv.current_context() == before);  // the caller's context is put back
  {
    cu::ScopedContext on1(drv, 1);
    drv.context_synchronize();
  }
  drv.context_synchronize();
  gpu_test::check_equal("device 0: x * 2", out0.to_host(), scaled(h0, 2.0f));
  gpu_test::check_equal("device 1: x * 5", out1.to_host(), scaled(h1, 5.0f));

  // Raw pointers say nothing: LaunchOptions::device chooses.
  auto opts = scale_options(n, 1024);
  opts.device = 1;
  k[opts](static_cast<float*>(x1.data()), static_cast<float*>(out1.data()), n, -1.0f);
  {
    cu::ScopedContext on1(drv, 1);
    drv.context_synchronize();
  }
  gpu_test::check_equal("device 1 by LaunchOptions::device", out1.to_host(), scaled(h1, -1.0f));

  // Tensors on two devices, or a device option against the tensors: refused before any launch.
  CHECK_THROWS_WITH(k[scale_options(n, 1024)](x0, out1, n, 1.0f),
                    Catch::Contains("argument 0 is on device 0 and argument 1 on device 1"));
  opts.device = 0;
  CHECK_THROWS_WITH(k[opts](x1, out1, n, 1.0f), Catch::Contains("LaunchOptions::device is 0, but argument 0 is on device 1"));
  opts.device = drv.device_count();
  CHECK_THROWS_WITH(k[opts](static_cast<float*>(x0.data()), static_cast<float*>(out0.data()), n, 1.0f),
                    Catch::Contains("does not exist"));

  // Autotuning on device 1: its timing runs and events belong to that device.
  auto tuned = ts::autotune(make_scale("two_devices_tuned"), {{.meta = {{"BLOCK", 256}}}, {.meta = {{"BLOCK", 1024}}}},
                            {.key = {2}, .warmup_ms = 1, .rep_ms = 5});
  tuned[{.grid = ts::Grid([n](const ts::MetaValues& m) {
           return ts::Dim3{static_cast<std::uint32_t>(ts::cdiv(std::int64_t{n}, m[0].second)), 1, 1};
         })}](x1, out1, n, 7.0f);
  {
    cu::ScopedContext on1(drv, 1);
    drv.context_synchronize();
  }
  gpu_test::check_equal("device 1 autotuned x * 7", out1.to_host(), scaled(h1, 7.0f));
}

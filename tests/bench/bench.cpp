// tessera benchmarks on a CUDA GPU. Prints one JSON line per case:
//   {"impl": "tessera", "name": ..., "metric": ..., "value": ..., "ok": true|false, "check": "..."}
// Modes: `bench all` (bandwidth and launch cost), `bench first_call [vector_add|layer_norm]` (run in a fresh process with
// CUDA_CACHE_DISABLE=1: trace + compile + load + launch, timed after the context exists), `bench ptx
// layer_norm|rms_norm|layer_norm_bwd|rms_norm_bwd ARCH` (the fp16 32768x4096 kernel's PTX as
// `rows` / `norm_bwd` time it (the backward's dX kernel), compiled
// without a GPU: `| ptxas -v -arch=ARCH -` gives its registers).
//
// Every timed kernel is checked once per case (tests/bench/bench_check.hpp): its outputs are
// poisoned with NaN, it runs once, and what it wrote is compared element by element with a host
// reference in double (examples/norm_kernels.hpp) before it is timed. A case that fails its check
// (or throws) is emitted with "ok": false (value null when it could not run), its first offenders
// go to stderr as "CHECK FAILED tessera <case>: ...", the other cases still run, and the program
// exits 3 at the end (1: an error outside any case; 2: bad arguments). Bounds: |got - want| <= atol + rtol * |want| per element, with
//   vector add           exact (the same single f32 addition)
//   softmax, online      rtol 1e-4 on sampled rows (64 spread over the matrix; the reference
//                        needs exp in double), and every row finite, in [0, 1], summing to 1 within 1e-4
//   norms, f16 outputs   rtol 1e-3 + atol 1e-3 * rms(want), every element (f16 rounding is at most
//                        2^-11 relative; dW/dB are f32 sums rounded once to f16)
//   mean, rstd (f32)     rtol 1e-4 + atol 1e-6, every row
#include <tessera/tessera.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cuda/cuda_driver.hpp"
#include "examples/kernels.hpp"
#include "examples/norm_kernels.hpp"
#include "tests/bench/bench_check.hpp"

namespace ts = tessera;
using Clock = std::chrono::steady_clock;

namespace {

auto make_add() {
  return ts::kernel("add", [](ts::Ptr<float> x, ts::Ptr<float> y, ts::Ptr<float> out, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    ts::store(out + offs, ts::load(x + offs, mask) + ts::load(y + offs, mask), mask);
  });
}

std::vector<std::string> g_failed;  // cases that failed their check or could not run

// One JSON line; with a check, its outcome ("ok") and summary ("check"). A value that is not a
// finite number (a case that could not run) is written as null.
void emit(const std::string& name, const char* metric, double value, const bench::Check* check = nullptr) {
  char v[64];
  if (std::isfinite(value)) std::snprintf(v, sizeof v, "%.4f", value);
  else std::snprintf(v, sizeof v, "null");
  std::string extra;
  if (check) {
    extra = std::string(", \"ok\": ") + (check->ok ? "true" : "false") + ", \"check\": \"" +
            bench::json_escape(check->detail) + "\"";
    if (!check->ok) g_failed.push_back(name);
  }
  std::printf("{\"impl\": \"tessera\", \"name\": \"%s\", \"metric\": \"%s\", \"value\": %s%s}\n", name.c_str(), metric, v,
              extra.c_str());
  std::fflush(stdout);
}

// Runs one case: `body(check)` launches the kernel once on poisoned outputs, checks what it wrote,
// times it and returns the metric. A tessera::Error (a compile or driver error) fails this case
// only; the next case still runs.
template <class Body>
void run_case(const std::string& name, const char* metric, Body&& body) {
  bench::Check check{name};
  double value = NAN;
  try {
    value = body(check);
  } catch (const ts::Error& e) {
    check.fail(std::string("could not run: ") + e.what());
  }
  emit(name, metric, value, &check);
}

using bench::median;
using bench::time_ms;

void bench_vector_add(tessera::cuda::CudaDriver& drv) {
  auto add = make_add();
  for (int log2n : {24, 28}) {
    const std::int32_t n = 1 << log2n;
    std::vector<float> hx(n), hy(n), want(n);
    for (std::int32_t i = 0; i < n; ++i) {
      hx[i] = static_cast<float>(i % 1000) * 0.001f;
      hy[i] = static_cast<float>(i % 777) * 0.002f - 0.5f;  // unlike x, so that x + x would fail
    }
    tessera_examples::vector_add_reference(hx, hy, want);
    auto x = ts::Buffer<float>::from_host(hx), y = ts::Buffer<float>::from_host(hy);
    ts::Buffer<float> out(n);
    for (auto [block, warps] : {std::pair{1024, 4}, std::pair{4096, 8}}) {
      auto launch = [&] {
        add[{.grid = {ts::cdiv(n, block)}, .meta = {{"BLOCK", block}}, .num_warps = warps}](x, y, out, n);
      };
      const std::string name = "vector_add_fp32_2^" + std::to_string(log2n) + "_B" + std::to_string(block) + "_W" + std::to_string(warps);
      run_case(name, "GB/s", [&](bench::Check& c) {
        bench::poison(drv, out);
        launch();
        drv.context_synchronize();
        bench::expect_equal(c, "out", out.to_host(), want);
        for (int i = 0; i < 5; ++i) launch();
        drv.context_synchronize();
        const double ms = time_ms(drv, launch, 50);
        return 3.0 * 4.0 * n / (ms * 1e-3) / 1e9;
      });
    }
  }
}

void bench_launch(tessera::cuda::CudaDriver& drv) {
  auto add = make_add();
  const std::int32_t n = 1024;
  std::vector<float> hx(n), hy(n), want(n);
  for (std::int32_t i = 0; i < n; ++i) hx[i] = static_cast<float>(i) * 0.5f, hy[i] = 3.0f - static_cast<float>(i) * 0.25f;
  tessera_examples::vector_add_reference(hx, hy, want);
  auto x = ts::Buffer<float>::from_host(hx), y = ts::Buffer<float>::from_host(hy);
  ts::Buffer<float> out(n);
  const ts::LaunchOptions opts{.grid = {1}, .meta = {{"BLOCK", 1024}}, .num_warps = 4};
  const int iters = 20000;
  // Rounds of 20,000 back-to-back launches; the first warms caches, the best of the other five is
  // reported (host timings on a shared machine only ever err upwards). The raw launches below are
  // measured the same way. The output is poisoned before the rounds and checked after them.
  run_case("launch_cached_vector_add", "us/launch", [&](bench::Check& c) {
    add[opts](x, y, out, n);
    drv.context_synchronize();
    bench::poison(drv, out);
    double best = 1e30;
    for (int round = 0; round < 6; ++round) {
      auto t0 = Clock::now();
      for (int i = 0; i < iters; ++i) add[opts](x, y, out, n);
      auto t1 = Clock::now();
      drv.context_synchronize();
      if (round > 0) best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count() / iters);
    }
    bench::expect_equal(c, "out", out.to_host(), want);
    return best;
  });
  // The same kernel through a raw cuLaunchKernel.
  run_case("launch_raw_cuLaunchKernel", "us/launch", [&](bench::Check& c) {
    std::array<ts::ArgValue, 4> args{ts::ArgValue::pointer(x.data(), ts::DType::F32), ts::ArgValue::pointer(y.data(), ts::DType::F32),
                                     ts::ArgValue::pointer(out.data(), ts::DType::F32), ts::ArgValue::integer(n, ts::DType::I32)};
    auto art = ts::detail::compile_only(add.def(), opts, args, "sm_90a");
    auto mod = drv.load_module(art.data);
    auto fn = drv.get_function(mod, "add");
    void* px = x.data(); void* py = y.data(); void* po = out.data(); std::int32_t nn = n;
    void* params[] = {&px, &py, &po, &nn};
    auto raw = drv.launch_fn();
    bench::poison(drv, out);
    drv.context_synchronize();
    double best = 1e30;
    for (int round = 0; round < 6; ++round) {
      auto t0 = Clock::now();
      for (int i = 0; i < iters; ++i) raw(fn, 1, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr);
      auto t1 = Clock::now();
      drv.context_synchronize();
      if (round > 0) best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count() / iters);
    }
    bench::expect_equal(c, "out", out.to_host(), want);
    return best;
  });
}

void bench_rows(tessera::cuda::CudaDriver& drv) {
  namespace ex = tessera_examples;
  auto softmax = ex::make_softmax();
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{32768, 4096}, {8192, 8192}}) {
    std::vector<float> h(static_cast<std::size_t>(rows * cols));
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>((i * 2654435761u) % 1000) * 1e-3f;
    auto x = ts::Buffer<float>::from_host(h);
    ts::Buffer<float> out(h.size());
    const auto c = static_cast<std::int32_t>(cols);
    auto launch = [&] { softmax[ex::softmax_options(rows, cols)](x, out, c, c); };
    run_case("softmax_fp32_" + std::to_string(rows) + "x" + std::to_string(cols), "GB/s", [&](bench::Check& check) {
      bench::poison(drv, out);
      launch();
      drv.context_synchronize();
      bench::check_softmax(check, h, out.to_host(), rows, cols);
      for (int i = 0; i < 3; ++i) launch();
      drv.context_synchronize();
      const double ms = time_ms(drv, launch, 30);
      return 2.0 * 4 * static_cast<double>(h.size()) / (ms * 1e-3) / 1e9;
    });
  }
  const std::int64_t rows = 32768, cols = 4096;
  const float eps = 1e-5f;
  const std::size_t elems = static_cast<std::size_t>(rows * cols);
  std::vector<ts::half> hx(elems), hw(cols), hb(cols);
  for (std::size_t i = 0; i < hx.size(); ++i) hx[i] = ts::half(static_cast<float>((i * 2654435761u) % 1000) * 1e-3f);
  // Weights and biases that differ by column, so that a wrong column offset shows.
  for (std::int64_t i = 0; i < cols; ++i)
    hw[i] = ts::half(1.0f + static_cast<float>(i % 7) * 0.125f), hb[i] = ts::half(0.25f - static_cast<float>(i % 5) * 0.125f);
  auto x = ts::Buffer<ts::half>::from_host(hx), w = ts::Buffer<ts::half>::from_host(hw), b = ts::Buffer<ts::half>::from_host(hb);
  ts::Buffer<ts::half> y(elems);
  ts::Buffer<float> mean(rows), rstd(rows);
  const auto c = static_cast<std::int32_t>(cols);
  auto ln = ex::make_layer_norm_fwd();
  auto rms = ex::make_rms_norm_fwd();
  auto ln_launch = [&] { ln[ex::layer_norm_options(rows, cols)](x, y, w, b, mean, rstd, c, c, eps); };
  auto rms_launch = [&] { rms[ex::layer_norm_options(rows, cols)](x, y, w, rstd, c, c, eps); };
  const double bytes = 2.0 * 2 * static_cast<double>(elems);
  run_case("layer_norm_fwd_fp16_32768x4096", "GB/s", [&](bench::Check& check) {
    bench::poison(drv, y); bench::poison(drv, mean); bench::poison(drv, rstd);
    ln_launch();
    drv.context_synchronize();
    std::vector<float> want(elems), want_mean(rows), want_rstd(rows);
    ex::layer_norm_reference(hx, hw, hb, want, rows, cols, eps);
    ex::layer_norm_stats(hx, want_mean, want_rstd, rows, cols, eps);
    bench::expect_close(check, "y", y.to_host(), want, cols, 1e-3, 0, 1e-3);
    bench::expect_close(check, "mean", mean.to_host(), want_mean, 1, 1e-4, 1e-6);
    bench::expect_close(check, "rstd", rstd.to_host(), want_rstd, 1, 1e-4, 1e-6);
    for (int i = 0; i < 3; ++i) ln_launch();
    drv.context_synchronize();
    return bytes / (time_ms(drv, ln_launch, 30) * 1e-3) / 1e9;
  });
  run_case("rms_norm_fwd_fp16_32768x4096", "GB/s", [&](bench::Check& check) {
    bench::poison(drv, y); bench::poison(drv, rstd);
    rms_launch();
    drv.context_synchronize();
    std::vector<float> want(elems), want_rstd(rows);
    ex::rms_norm_reference(hx, hw, want, rows, cols, eps);
    ex::rms_norm_stats(hx, want_rstd, rows, cols, eps);
    bench::expect_close(check, "y", y.to_host(), want, cols, 1e-3, 0, 1e-3);
    bench::expect_close(check, "rstd", rstd.to_host(), want_rstd, 1, 1e-4, 1e-6);
    for (int i = 0; i < 3; ++i) rms_launch();
    drv.context_synchronize();
    return bytes / (time_ms(drv, rms_launch, 30) * 1e-3) / 1e9;
  });
}

// Layer norm and RMSNorm backward (dX kernel + partial-sum kernel, timed together) and the online
// softmax over long rows; bytes as examples/norm_kernels.hpp counts them (triton_ref.py the same).
void bench_norm_bwd(tessera::cuda::CudaDriver& drv) {
  namespace ex = tessera_examples;
  const float eps = 1e-5f;
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{32768, 4096}, {4096, 8192}}) {
    const std::size_t elems = static_cast<std::size_t>(rows * cols);
    std::vector<ts::half> hx(elems), hdy(elems), hw(cols);
    for (std::size_t i = 0; i < elems; ++i) {
      hx[i] = ts::half(static_cast<float>((i * 2654435761u) % 1000) * 1e-3f);
      hdy[i] = ts::half(static_cast<float>((i * 40503u) % 1000) * 1e-3f - 0.5f);
    }
    for (std::int64_t c = 0; c < cols; ++c) hw[c] = ts::half(1.0f + static_cast<float>(c % 7) * 0.125f);
    std::vector<float> hmean(rows), hrstd(rows), hrms_rstd(rows);
    ex::layer_norm_stats(hx, hmean, hrstd, rows, cols, eps);
    ex::rms_norm_stats(hx, hrms_rstd, rows, cols, eps);
    const std::int64_t programs = ex::norm_bwd_programs(rows);
    auto x = ts::Buffer<ts::half>::from_host(hx), dy = ts::Buffer<ts::half>::from_host(hdy),
         w = ts::Buffer<ts::half>::from_host(hw);
    auto mean = ts::Buffer<float>::from_host(hmean), rstd = ts::Buffer<float>::from_host(hrstd),
         rms_rstd = ts::Buffer<float>::from_host(hrms_rstd);
    ts::Buffer<ts::half> dx(elems), dw(cols), db(cols);
    ts::Buffer<float> dwp(programs * cols), dbp(programs * cols);
    const auto m = static_cast<std::int32_t>(rows), n = static_cast<std::int32_t>(cols),
               p = static_cast<std::int32_t>(programs);
    auto ln_dx = ex::make_layer_norm_bwd_dx();
    auto ln_dwdb = ex::make_layer_norm_bwd_dwdb();
    auto rms_dx = ex::make_rms_norm_bwd_dx();
    auto rms_dw = ex::make_rms_norm_bwd_dw();
    auto ln = [&] {
      ln_dx[ex::norm_bwd_dx_options(cols, programs)](x, dy, dx, w, mean, rstd, dwp, dbp, n, m, n);
      ln_dwdb[ex::partial_sum_options(cols)](dwp, dbp, dw, db, p, n);
    };
    auto rms = [&] {
      rms_dx[ex::norm_bwd_dx_options(cols, programs)](x, dy, dx, w, rms_rstd, dwp, n, m, n);
      rms_dw[ex::partial_sum_options(cols)](dwp, dw, p, n);
    };
    const std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
    // The partial buffers are poisoned too: a partial row the dX kernel leaves unwritten turns dW NaN.
    run_case("layer_norm_bwd_fp16_" + shape, "GB/s", [&](bench::Check& check) {
      bench::poison(drv, dx); bench::poison(drv, dw); bench::poison(drv, db);
      bench::poison(drv, dwp); bench::poison(drv, dbp);
      ln();
      drv.context_synchronize();
      std::vector<double> rdx(elems), rdw(cols), rdb(cols);
      ex::layer_norm_bwd_reference(hx, hdy, hw, hmean, hrstd, rdx, rdw, rdb, rows, cols);
      bench::expect_close(check, "dx", dx.to_host(), rdx, cols, 1e-3, 0, 1e-3);
      bench::expect_close(check, "dw", dw.to_host(), rdw, 1, 1e-3, 0, 1e-3);
      bench::expect_close(check, "db", db.to_host(), rdb, 1, 1e-3, 0, 1e-3);
      for (int i = 0; i < 3; ++i) ln();
      drv.context_synchronize();
      return ex::layer_norm_bwd_bytes(rows, cols) / (time_ms(drv, ln, 30) * 1e-3) / 1e9;
    });
    run_case("rms_norm_bwd_fp16_" + shape, "GB/s", [&](bench::Check& check) {
      bench::poison(drv, dx); bench::poison(drv, dw); bench::poison(drv, dwp);
      rms();
      drv.context_synchronize();
      std::vector<double> rdx(elems), rdw(cols);
      ex::rms_norm_bwd_reference(hx, hdy, hw, hrms_rstd, rdx, rdw, rows, cols);
      bench::expect_close(check, "dx", dx.to_host(), rdx, cols, 1e-3, 0, 1e-3);
      bench::expect_close(check, "dw", dw.to_host(), rdw, 1, 1e-3, 0, 1e-3);
      for (int i = 0; i < 3; ++i) rms();
      drv.context_synchronize();
      return ex::rms_norm_bwd_bytes(rows, cols) / (time_ms(drv, rms, 30) * 1e-3) / 1e9;
    });
  }
  auto osm = ex::make_online_softmax();
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{4096, 65536}, {1024, 262144}}) {
    std::vector<float> h(static_cast<std::size_t>(rows * cols));
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>((i * 2654435761u) % 1000) * 1e-3f;
    auto x = ts::Buffer<float>::from_host(h);
    ts::Buffer<float> out(h.size());
    const auto c = static_cast<std::int32_t>(cols);
    auto launch = [&] { osm[ex::online_softmax_options(rows)](x, out, c, c); };
    const std::string name = "online_softmax_fp32_" + std::to_string(rows) + "x" + std::to_string(cols) + "_B" +
                             std::to_string(ex::kOnlineSoftmaxBlock);
    run_case(name, "GB/s", [&](bench::Check& check) {
      bench::poison(drv, out);
      launch();
      drv.context_synchronize();
      bench::check_softmax(check, h, out.to_host(), rows, cols);
      for (int i = 0; i < 3; ++i) launch();
      drv.context_synchronize();
      return ex::online_softmax_bytes(rows, cols) / (time_ms(drv, launch, 30) * 1e-3) / 1e9;
    });
  }
}

// The first call of a kernel in this process: build (trace, passes, LLVM, ptxas; or a disk-cache
// hit) + load + launch. Run in a fresh process; the cache directory decides cold or disk hit.
// Emits first_call_<kernel> when it compiled, disk_hit_<kernel> when the disk cache served it
// (with the check of what that launch wrote), and where a cold build's time went.
template <class Launch, class Warmup, class CheckFn>
void first_call(tessera::cuda::CudaDriver& drv, const std::string& kernel, Launch launch, Warmup warmup, CheckFn check) {
  drv.context_synchronize();
  auto t0 = Clock::now();
  const ts::ResourceReport r = warmup();
  launch();
  drv.context_synchronize();
  auto t1 = Clock::now();
  const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  const std::string name = (r.from_disk_cache ? "disk_hit_" : "first_call_") + kernel;
  bench::Check c{name};
  try {
    check(c);
  } catch (const ts::Error& e) {
    c.fail(std::string("could not check: ") + e.what());
  }
  emit(name, "ms", ms, &c);
  if (r.from_disk_cache) return;
  const auto& t = r.times_ms;
  for (auto [stage, v] : {std::pair{"trace", t.trace}, {"passes", t.passes}, {"codegen", t.codegen},
                          {"ptxas", t.assemble}, {"load", t.load}})
    emit("first_call_" + kernel + "." + stage, "ms", v);
}

void bench_first_call(tessera::cuda::CudaDriver& drv, const std::string& kernel) {
  // The context, buffers and their data exist (outputs poisoned) before the clock starts (every
  // framework pays for them).
  if (kernel == "vector_add") {
    const std::int32_t n = 1 << 20;
    std::vector<float> hx(n), hy(n), want(n);
    for (std::int32_t i = 0; i < n; ++i) hx[i] = static_cast<float>(i % 1000) * 0.001f, hy[i] = static_cast<float>(i % 777) * 0.002f;
    tessera_examples::vector_add_reference(hx, hy, want);
    auto x = ts::Buffer<float>::from_host(hx), y = ts::Buffer<float>::from_host(hy);
    ts::Buffer<float> out(n);
    bench::poison(drv, out);
    auto add = make_add();
    const ts::LaunchOptions opts{.grid = {ts::cdiv(n, 1024)}, .meta = {{"BLOCK", 1024}}, .num_warps = 4};
    first_call(drv, kernel, [&] { add[opts](x, y, out, n); }, [&] { return add.warmup(opts, x, y, out, n); },
               [&](bench::Check& c) { bench::expect_equal(c, "out", out.to_host(), want); });
  } else if (kernel == "layer_norm") {
    namespace ex = tessera_examples;
    const std::int64_t rows = 4096, cols = 4096;
    const float eps = 1e-5f;
    std::vector<ts::half> hx(static_cast<std::size_t>(rows * cols)), hw(cols), hb(cols);
    for (std::size_t i = 0; i < hx.size(); ++i) hx[i] = ts::half(static_cast<float>((i * 2654435761u) % 1000) * 1e-3f);
    for (std::int64_t i = 0; i < cols; ++i)
      hw[i] = ts::half(1.0f + static_cast<float>(i % 7) * 0.125f), hb[i] = ts::half(0.25f - static_cast<float>(i % 5) * 0.125f);
    auto x = ts::Buffer<ts::half>::from_host(hx), w = ts::Buffer<ts::half>::from_host(hw), b = ts::Buffer<ts::half>::from_host(hb);
    ts::Buffer<ts::half> y(rows * cols);
    ts::Buffer<float> mean(rows), rstd(rows);
    bench::poison(drv, y); bench::poison(drv, mean); bench::poison(drv, rstd);
    const auto c = static_cast<std::int32_t>(cols);
    auto ln = ex::make_layer_norm_fwd();
    const auto opts = ex::layer_norm_options(rows, cols);
    first_call(drv, kernel, [&] { ln[opts](x, y, w, b, mean, rstd, c, c, eps); },
               [&] { return ln.warmup(opts, x, y, w, b, mean, rstd, c, c, eps); },
               [&](bench::Check& check) {
                 std::vector<float> want(hx.size()), want_mean(rows), want_rstd(rows);
                 ex::layer_norm_reference(hx, hw, hb, want, rows, cols, eps);
                 ex::layer_norm_stats(hx, want_mean, want_rstd, rows, cols, eps);
                 bench::expect_close(check, "y", y.to_host(), want, cols, 1e-3, 0, 1e-3);
                 bench::expect_close(check, "mean", mean.to_host(), want_mean, 1, 1e-4, 1e-6);
                 bench::expect_close(check, "rstd", rstd.to_host(), want_rstd, 1, 1e-4, 1e-6);
               });
  } else {
    throw ts::Error("bench first_call: unknown kernel '" + kernel + "' (vector_add, layer_norm)");
  }
}

}  // namespace

// The PTX of a norm forward kernel as bench_rows launches it (fp16, 32768 x 4096), for `arch`.
int print_row_kernel_ptx(const std::string& kernel, const std::string& arch) {
  namespace ex = tessera_examples;
  const std::int64_t rows = 32768, cols = 4096;
  std::vector<ts::half> x(16), w(16), b(16), y(16);
  std::vector<float> mean(16), rstd(16);
  const std::int32_t c = static_cast<std::int32_t>(cols);
  const float eps = 1e-5f;
  auto write = [](const auto& art) { return std::fwrite(art.data.data(), 1, art.data.size(), stdout), 0; };
  if (kernel == "layer_norm") {
    auto ln = ex::make_layer_norm_fwd();
    return write(ln.warmup(arch, ex::layer_norm_options(rows, cols), std::span<ts::half>(x), std::span<ts::half>(y),
                    std::span<ts::half>(w), std::span<ts::half>(b), std::span<float>(mean), std::span<float>(rstd), c, c, eps));
  }
  if (kernel == "rms_norm") {
    auto rms = ex::make_rms_norm_fwd();
    return write(rms.warmup(arch, ex::layer_norm_options(rows, cols), std::span<ts::half>(x), std::span<ts::half>(y),
                     std::span<ts::half>(w), std::span<float>(rstd), c, c, eps));
  }
  const std::int64_t programs = ex::norm_bwd_programs(rows);
  const std::int32_t m = static_cast<std::int32_t>(rows);
  std::vector<float> dwp(16), dbp(16);
  if (kernel == "layer_norm_bwd") {
    auto dx = ex::make_layer_norm_bwd_dx();
    return write(dx.warmup(arch, ex::norm_bwd_dx_options(cols, programs), std::span<ts::half>(x), std::span<ts::half>(y),
                           std::span<ts::half>(b), std::span<ts::half>(w), std::span<float>(mean), std::span<float>(rstd),
                           std::span<float>(dwp), std::span<float>(dbp), c, m, c));
  }
  if (kernel == "rms_norm_bwd") {
    auto dx = ex::make_rms_norm_bwd_dx();
    return write(dx.warmup(arch, ex::norm_bwd_dx_options(cols, programs), std::span<ts::half>(x), std::span<ts::half>(y),
                           std::span<ts::half>(b), std::span<ts::half>(w), std::span<float>(rstd), std::span<float>(dwp), c,
                           m, c));
  }
  std::fprintf(stderr, "tessera_bench ptx: kernel %s is not layer_norm, rms_norm, layer_norm_bwd or rms_norm_bwd\n",
               kernel.c_str());
  return 2;
}

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "all";
  if (mode == "ptx" && argc == 4) {
    try {
      return print_row_kernel_ptx(argv[2], argv[3]);
    } catch (const ts::Error& e) {
      std::fprintf(stderr, "bench: %s\n", e.what());
      return 1;
    }
  }
  if (mode != "all" && mode != "basic" && mode != "rows" && mode != "norm_bwd" && mode != "first_call") {
    std::fprintf(stderr, "usage: tessera_bench [all|basic|rows|norm_bwd|first_call vector_add|first_call layer_norm|"
                         "ptx layer_norm|rms_norm|layer_norm_bwd|rms_norm_bwd ARCH]\n");
    return 2;
  }
  try {
    auto& drv = tessera::cuda::CudaDriver::require();
    drv.ensure_context();
    if (mode == "first_call") {
      bench_first_call(drv, argc > 2 ? argv[2] : "vector_add");
    } else {
      if (mode == "all" || mode == "basic") {
        bench_vector_add(drv);
        bench_launch(drv);
      }
      if (mode == "all" || mode == "rows") bench_rows(drv);
      if (mode == "all" || mode == "rows" || mode == "norm_bwd") bench_norm_bwd(drv);
    }
  } catch (const ts::Error& e) {
    std::fprintf(stderr, "bench: %s\n", e.what());
    return 1;
  }
  if (!g_failed.empty()) {
    std::string names;
    for (const auto& n : g_failed) names += (names.empty() ? "" : ", ") + n;
    std::fprintf(stderr, "tessera_bench: %zu case(s) FAILED their correctness check (\"ok\": false): %s\n",
                 g_failed.size(), names.c_str());
    return 3;
  }
  return 0;
}

// GPU tests (tier 5): every kernel runs on the GPU and on the interpreter (the oracle) with the
// same random inputs; GPU outputs are poisoned first, so an element that is not written fails.
// Outputs are compared element by element (compare.hpp). Without a GPU the program runs no case
// and exits 77 (gpu_main.cpp); tests/gpu/device_run.sh runs it on the GPU machine.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include "backends/cuda/cuda_driver.hpp"
#include "compare.hpp"
#include "tests/pipeline/scan_kernels.hpp"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

namespace ts = tessera;

namespace {

template <class T>
std::vector<T> random_vector(std::size_t n, std::mt19937& rng, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

// Launches `k` over n elements on the GPU (poisoned output) and on the interpreter; compares
// element by element with the bound of T (compare.hpp: f32 1e-5, f16/bf16 1e-2 relative, with an
// absolute floor of the same size below magnitude 1, the scale of the kernels' terms; integers exact).
// `compile` goes to the GPU launch; `slack(x, y)`, when given, widens element i's bound (a fused
// multiply-add rounds once where the interpreter rounds twice: the product's rounding error).
template <class T, class K>
void check_both(K& k, std::size_t n, int block, int warps, std::uint32_t seed, double lo, double hi,
                ts::CompileOptions compile = {}, std::function<double(double x, double y)> slack = {}) {
  std::mt19937 rng(seed);
  auto hx = random_vector<T>(n, rng, lo, hi), hy = random_vector<T>(n, rng, lo, hi);
  std::vector<T> poison(n);
  std::memset(poison.data(), 0x7f, n * sizeof(T));
  std::vector<T> results[2];
  const ts::Executor execs[2] = {ts::Executor::Cuda, ts::Executor::Interpreter};
  for (int e = 0; e < 2; ++e) {
    auto x = ts::Buffer<T>::from_host(hx, execs[e]), y = ts::Buffer<T>::from_host(hy, execs[e]);
    auto out = ts::Buffer<T>::from_host(poison, execs[e]);
    k[{.grid = {ts::cdiv(static_cast<std::int64_t>(n), block)}, .meta = {{"BLOCK", block}}, .num_warps = warps,
       .executor = execs[e], .compile = compile}](x, y, out, static_cast<std::int32_t>(n));
    ts::synchronize(execs[e]);
    results[e] = out.to_host();
  }
  INFO("n = " << n << ", block = " << block << ", warps = " << warps << ", seed = " << seed
              << ", fp_fusion = " << compile.fp_fusion);
  if constexpr (gpu_test::is_float_v<T>) {
    if (slack) {
      const auto tol = gpu_test::default_tolerance<T>();
      gpu_test::check_report("GPU vs interpreter", gpu_test::compare_with(results[0], results[1], [&](std::size_t i) {
        const double want = gpu_test::as_double(results[1][i]);
        return tol.rel * std::fabs(want) + tol.abs + slack(gpu_test::as_double(hx[i]), gpu_test::as_double(hy[i]));
      }));
      return;
    }
  }
  gpu_test::check_close("GPU vs interpreter", results[0], results[1]);
}

// The unit roundoff of T's arithmetic (half an ulp at 1).
template <class T>
double unit_roundoff() {
  if constexpr (std::is_same_v<T, ts::half>) return 0x1p-11;
  else if constexpr (std::is_same_v<T, ts::bfloat16>) return 0x1p-8;
  else return std::numeric_limits<T>::epsilon() / 2;
}

template <class T>
auto arith_kernel() {
  return ts::kernel("arith", [](ts::Ptr<T> x, ts::Ptr<T> y, ts::Ptr<T> out, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto a = ts::load(x + offs, mask);
    auto b = ts::load(y + offs, mask);
    auto r = ts::where(a > b, a - b, ts::maximum(a, b) + ts::minimum(a, b) * b);
    ts::store(out + offs, r, mask);
  });
}

template <class T>
auto math_kernel() {
  return ts::kernel("math", [](ts::Ptr<T> x, ts::Ptr<T> y, ts::Ptr<T> out, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto a = ts::load(x + offs, mask, 1.0f).template to<float>();
    auto b = ts::load(y + offs, mask, 1.0f).template to<float>();
    auto r = ts::exp(a * 0.5f) + ts::log(ts::abs(b) + 1.0f) - ts::sqrt(ts::abs(a)) / (b * b + 1.0f);
    ts::store(out + offs, r.template to<T>(), mask);
  });
}

}  // namespace

TEMPLATE_TEST_CASE("GPU matches the interpreter on elementwise arithmetic", "[gpu]", float, double, ts::half,
                   ts::bfloat16, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint32_t) {
  auto k = arith_kernel<TestType>();
  std::uint32_t seed = 1;
  // Without contraction the GPU rounds every multiply and add as the interpreter does; with it
  // (the default) max + min * y is one fma, off by at most the product's rounding.
  const ts::CompileOptions unfused{.fp_fusion = false};
  auto product_rounding = [](double x, double y) { return std::fabs(std::min(x, y) * y) * unit_roundoff<TestType>(); };
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, (std::size_t{1} << 20) + 3})
    for (auto [block, warps] : {std::pair{1024, 4}, std::pair{256, 2}, std::pair{4096, 8}}) {
      check_both<TestType>(k, n, block, warps, seed, -100, 100, unfused);
      if constexpr (gpu_test::is_float_v<TestType>) check_both<TestType>(k, n, block, warps, seed, -100, 100, {}, product_rounding);
      ++seed;
    }
}

TEMPLATE_TEST_CASE("GPU matches the interpreter on exp, log, sqrt and casts", "[gpu]", float, ts::half, ts::bfloat16) {
  auto k = math_kernel<TestType>();
  std::uint32_t seed = 100;
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, (std::size_t{1} << 20) + 3})
    check_both<TestType>(k, n, 1024, 4, seed++, -8, 8);
}

namespace {
auto mask_kernel() {
  return ts::kernel("masks", [](ts::Ptr<bool> x, ts::Ptr<bool> y, ts::Ptr<bool> out, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto a = ts::load(x + offs, mask);
    auto b = ts::load(y + offs, mask);
    ts::store(out + offs, (a && !b) || (a.to<std::int32_t>() + b.to<std::int32_t>() == 2), mask);
  });
}
}  // namespace

TEST_CASE("GPU matches the interpreter on i1 tiles", "[gpu]") {
  auto k = mask_kernel();
  std::mt19937 rng(5);
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, (std::size_t{1} << 20) + 3}) {
    std::vector<std::uint8_t> hx(n), hy(n);
    for (std::size_t i = 0; i < n; ++i) { hx[i] = rng() & 1; hy[i] = rng() & 1; }
    std::vector<std::uint8_t> results[2];
    const ts::Executor execs[2] = {ts::Executor::Cuda, ts::Executor::Interpreter};
    for (int e = 0; e < 2; ++e) {
      ts::Buffer<bool> x(n, execs[e]), y(n, execs[e]), out(n, execs[e]);
      ts::detail::memory_to_device(execs[e], x.data(), hx.data(), n);
      ts::detail::memory_to_device(execs[e], y.data(), hy.data(), n);
      std::vector<std::uint8_t> poison(n, 0x55);
      ts::detail::memory_to_device(execs[e], out.data(), poison.data(), n);
      k[{.grid = {ts::cdiv(static_cast<std::int64_t>(n), 1024)}, .meta = {{"BLOCK", 1024}}, .executor = execs[e]}](
          x, y, out, static_cast<std::int32_t>(n));
      ts::synchronize(execs[e]);
      results[e].resize(n);
      ts::detail::memory_to_host(execs[e], results[e].data(), out.data(), n);
    }
    // The kernel computes a; every byte written as 0 or 1 (the poison 0x55 or any other byte fails).
    std::vector<std::uint8_t> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = hx[i] != 0;
    INFO("n = " << n);
    gpu_test::check_equal("i1 bytes on the GPU", results[0], want);
    gpu_test::check_equal("i1 bytes on the interpreter", results[1], want);
  }
}

TEST_CASE("PTX rejected by the driver gives its log", "[gpu][api-error]") {
  // PTX that uses a register it never declares: the driver's JIT log must reach the message.
  // Tagged [api-error]: the failed cuModuleLoadDataEx is the point of the test, and
  // compute-sanitizer counts it as an error, so tests/gpu/sanitize_gpu.sh leaves this case out.
  const std::string bad_ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry broken() {\n  mov.u32 %r1, 5;\n  ret;\n}\n";
  try {
    tessera::cuda::CudaDriver::require().load_module(bad_ptx);
    FAIL("the driver accepted broken PTX");
  } catch (const ts::DriverError& e) {
    std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("%r1") != std::string::npos);
  }
}

namespace {
// out[j, i] = x[i, j] for an M x N matrix: a row-major read and a column-major write, each
// coalesced, with a padded shared-memory conversion between them.
auto transpose_kernel() {
  return ts::kernel("transpose", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int m, ts::Int n) {
    const int B = static_cast<int>(ts::meta("B"));
    auto rows = ts::program_id(0) * B + ts::arange(0, B);
    auto cols = ts::program_id(1) * B + ts::arange(0, B);
    auto mask = (rows.col() < m) && (cols.row() < n);
    auto v = ts::load(x + rows.col() * n + cols.row(), mask);
    ts::store(out + cols.row() * m + rows.col(), v, mask);
  });
}
}  // namespace

TEST_CASE("GPU transpose (coalesced read, coalesced write, padded conversion) matches", "[gpu]") {
  auto k = transpose_kernel();
  std::mt19937 rng(17);
  for (auto [m, n] : {std::pair{1000, 300}, std::pair{64, 64}, std::pair{1, 777}, std::pair{4096, 4096}}) {
    auto hx = random_vector<float>(static_cast<std::size_t>(m) * n, rng, -1, 1);
    std::vector<float> poison(hx.size(), -7.0f);
    auto x = ts::Buffer<float>::from_host(hx, ts::Executor::Cuda);
    auto out = ts::Buffer<float>::from_host(poison, ts::Executor::Cuda);
    k[{.grid = {ts::cdiv(m, 64), ts::cdiv(n, 64)}, .meta = {{"B", 64}}, .num_warps = 4, .executor = ts::Executor::Cuda}](x, out, m, n);
    ts::synchronize(ts::Executor::Cuda);
    std::vector<float> want(hx.size());
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) want[static_cast<std::size_t>(j) * m + i] = hx[static_cast<std::size_t>(i) * n + j];
    INFO(m << " x " << n);
    gpu_test::check_equal("transpose", out.to_host(), want);
  }
}

TEST_CASE("num_warps from 1 to 32 and a 3-D grid run on the GPU as on the interpreter", "[gpu]") {
  auto k = arith_kernel<float>();
  std::uint32_t seed = 900;
  for (int warps : {1, 2, 16, 32})
    for (std::size_t n : {std::size_t{1000}, (std::size_t{1} << 20) + 3}) check_both<float>(k, n, 2048, warps, seed++, -100, 100);

  // out[z][y][x] = x + 1000 * y + 1000000 * z + 7 * (num_programs(0) + num_programs(1) + num_programs(2)),
  // one program per element of a 13 x 5 x 3 grid.
  auto grid3 = ts::kernel("grid3", [](ts::Ptr<std::int32_t> out) {
    auto x = ts::program_id(0), y = ts::program_id(1), z = ts::program_id(2);
    auto total = ts::num_programs(0) + ts::num_programs(1) + ts::num_programs(2);
    auto idx = (z * ts::num_programs(1) + y) * ts::num_programs(0) + x;
    ts::store(out + idx, x + 1000 * y + 1000000 * z + 7 * total);
  });
  const int gx = 13, gy = 5, gz = 3;
  auto out = ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>(gx * gy * gz, -1), ts::Executor::Cuda);
  grid3[{.grid = {gx, gy, gz}, .num_warps = 1, .executor = ts::Executor::Cuda}](out);
  ts::synchronize(ts::Executor::Cuda);
  std::vector<std::int32_t> want(static_cast<std::size_t>(gx * gy * gz));
  for (int z = 0; z < gz; ++z)
    for (int y = 0; y < gy; ++y)
      for (int x = 0; x < gx; ++x)
        want[static_cast<std::size_t>((z * gy + y) * gx + x)] = x + 1000 * y + 1000000 * z + 7 * (gx + gy + gz);
  gpu_test::check_equal("3-D grid", out.to_host(), want);
}

TEST_CASE("GPU scans (cumsum, cumprod, max-scan, both axes, reverse) match prefix loops", "[gpu]") {
  std::mt19937 rng(31);
  std::uniform_int_distribution<int> d(-3, 3);
  for (auto [rows, cols, warps] : scan_test::kScanShapes)
    for (int kind = 0; kind < scan_test::kScanKinds; ++kind)
      for (int axis = 0; axis < 2; ++axis)
        for (bool reverse : {false, true}) {
          INFO(rows << " x " << cols << ", " << warps << " warps, kind " << kind << ", axis " << axis << ", reverse " << reverse);
          std::vector<std::int32_t> hx(static_cast<std::size_t>(rows) * cols);
          for (auto& v : hx) v = d(rng);
          auto x = ts::Buffer<std::int32_t>::from_host(hx, ts::Executor::Cuda);
          auto out = ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>(hx.size(), -99), ts::Executor::Cuda);
          auto k = scan_test::scan_kernel();
          k[{.grid = {1}, .meta = scan_test::scan_meta(rows, cols, kind, axis, reverse), .num_warps = warps,
             .executor = ts::Executor::Cuda}](x, out);
          ts::synchronize(ts::Executor::Cuda);
          gpu_test::check_equal("scan", out.to_host(), scan_test::reference(hx, rows, cols, kind, axis, reverse));
        }
}

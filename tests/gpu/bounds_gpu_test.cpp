// Debug mode's bounds checks of global accesses on the GPU: accesses inside their argument's
// buffer (and masked-off lanes past its end) leave the results as without debug mode; an access
// past the end, found through a loop-carried pointer too, prints the program, the element, the
// argument, the byte offset and extent and the source line, then traps (CUDA_ERROR_ASSERT). The
// failing launches run in a child process (this binary, hidden cases), as a trap kills the context.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <random>
#include <span>
#include <string>
#include <vector>

#include "tests/gpu/child_process.hpp"
#include "tests/common/bounds_kernels.hpp"

namespace ts = tessera;
using namespace tessera::test;

namespace {

constexpr unsigned kSeed = 20261204;
constexpr int kPrograms = 3;

std::vector<float> random_floats(std::size_t n) {
  std::mt19937 rng(kSeed);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (auto& e : v) e = u(rng);
  return v;
}

ts::Buffer<float> on_gpu(const std::vector<float>& v) {
  return ts::Buffer<float>::from_host(std::span<const float>(v), ts::Executor::Cuda);
}

const ts::LaunchOptions kDebug{.grid = {kPrograms}, .num_warps = 4, .executor = ts::Executor::Cuda,
                               .compile = {.debug = true}};

// make_probe in debug mode over x and out of the given sizes; out read back.
std::vector<float> run_probe(std::size_t x_size, std::size_t out_size, std::int32_t load_reach, std::int32_t store_reach) {
  const auto x = random_floats(x_size);
  auto bx = on_gpu(x);
  auto bout = on_gpu(std::vector<float>(out_size, -7.0f));
  auto k = bounds_kernels::make_probe();
  k[kDebug](bx, bout, load_reach, store_reach);
  ts::synchronize(ts::Executor::Cuda);
  return bout.to_host();
}

// make_row_walker in debug mode over `rows` rows of an x of `x_rows` rows; {out, total}.
std::pair<std::vector<float>, float> run_rows(int x_rows, int rows) {
  const auto x = random_floats(static_cast<std::size_t>(x_rows) * 64);
  auto bx = on_gpu(x);
  auto bout = on_gpu(std::vector<float>(64, 0.0f));
  auto btotal = on_gpu(std::vector<float>(1, 0.0f));
  auto k = bounds_kernels::make_row_walker();
  k[{.grid = {1}, .num_warps = 4, .executor = ts::Executor::Cuda, .compile = {.debug = true}}](bx, bout, btotal, rows);
  ts::synchronize(ts::Executor::Cuda);
  return {bout.to_host(), btotal.to_host()[0]};
}

std::string site(int line_offset) {
  return "bounds_kernels.hpp:" + std::to_string(bounds_kernels::kProbeLine + line_offset) + ":";
}

}  // namespace

TEST_CASE("GPU debug mode: accesses inside their buffers pass the bounds checks", "[gpu][shape][bounds]") {
  constexpr std::size_t n = 128 * kPrograms - 1;  // the last program's last element lies past the end
  const auto x = random_floats(n);
  // Masked-off lanes past the end are not accesses: reach n, not n + 1.
  CHECK(run_probe(n, n, n, n) == bounds_kernels::probe_reference(x, std::vector<float>(n, -7.0f), n, n));
  CHECK(run_probe(n, n, 100, 200) == bounds_kernels::probe_reference(x, std::vector<float>(n, -7.0f), 100, 200));
  const auto [out, total] = run_rows(5, 5);
  const auto xr = random_floats(5 * 64);
  float want_total = 0.0f;
  for (int c = 0; c < 64; ++c) {
    float s = 0.0f;
    for (int r = 0; r < 5; ++r) s += xr[static_cast<std::size_t>(r * 64 + c)];
    CHECK(out[static_cast<std::size_t>(c)] == Approx(s).margin(1e-5));
    want_total += s;
  }
  CHECK(total == Approx(want_total).margin(1e-3));
}

// The children: hidden ([.]), run only by name from the cases below.
TEST_CASE("child: a load past the end of x", "[.][bounds-load-child]") { run_probe(128 * kPrograms - 1, 128 * kPrograms, 384, 384); }
TEST_CASE("child: a store past the end of out", "[.][bounds-store-child]") { run_probe(128 * kPrograms, 128 * kPrograms - 1, 384, 384); }
TEST_CASE("child: a loop-carried pointer walks past the end of x", "[.][bounds-loop-child]") { run_rows(4, 5); }

TEST_CASE("GPU debug mode: a load past its buffer names the element, the argument and the line, then traps", "[gpu][shape][bounds]") {
  check_child_trapped("[bounds-load-child]",
                      {"pid (2, 0, 0) idx (15, 7) load out of bounds of argument 'arg0' (byte offset 1532, extent 1532) at ",
                       site(0)});
}

TEST_CASE("GPU debug mode: a store past its buffer names the element, the argument and the line, then traps", "[gpu][shape][bounds]") {
  check_child_trapped("[bounds-store-child]",
                      {"pid (2, 0, 0) idx (15, 7) store out of bounds of argument 'arg1' (byte offset 1532, extent 1532) at ",
                       site(1)});
}

TEST_CASE("GPU debug mode: a loop-carried pointer past its buffer is caught", "[gpu][shape][bounds]") {
  check_child_trapped("[bounds-loop-child]",
                      {"pid (0, 0, 0) idx (0) load out of bounds of argument 'arg0' (byte offset 1024, extent 1024) at "});
}

// device_assert and debug mode on the GPU. Passing checks leave the results as without them; a
// failing one is run in a child process (this binary, a hidden case), because a device assert
// traps and leaves the CUDA context unusable: the child's output must name the program, the
// element and the source line (the vprintf line before the trap) and its error CUDA_ERROR_ASSERT.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <random>
#include <span>
#include <string>
#include <vector>

#include "tests/gpu/child_process.hpp"
#include "tests/common/language_reference.hpp"

namespace ts = tessera;
using namespace tessera::test;

namespace {

constexpr unsigned kSeed = 20261203;
constexpr int kPrograms = 3;

std::vector<std::int32_t> checker_input() {
  std::mt19937 rng(kSeed);
  std::vector<std::int32_t> x(128 * kPrograms);
  for (auto& v : x) v = static_cast<std::int32_t>(rng() % 2000) - 1000;  // [-1000, 999]
  return x;
}

// make_checker on the GPU in debug mode; the output, read back.
std::vector<std::int32_t> run_checker(const std::vector<std::int32_t>& x, std::int32_t limit, std::int32_t scale) {
  auto bx = ts::Buffer<std::int32_t>::from_host(std::span<const std::int32_t>(x), ts::Executor::Cuda);
  auto bout = ts::Buffer<std::int32_t>::from_host(std::span<const std::int32_t>(std::vector<std::int32_t>(x.size(), -7)),
                                                  ts::Executor::Cuda);
  auto k = language_reference::make_checker();
  k[{.grid = {kPrograms}, .num_warps = 4, .executor = ts::Executor::Cuda, .compile = {.debug = true}}](bx, bout, limit,
                                                                                                     scale);
  ts::synchronize(ts::Executor::Cuda);
  return bout.to_host();
}

std::string site(int line_offset) {
  return "language_reference.hpp:" + std::to_string(language_reference::kCheckLine + line_offset) + ":";
}

}  // namespace

TEST_CASE("GPU debug mode: passing asserts and overflow checks leave the results as without them", "[gpu][shape][assert]") {
  const auto x = checker_input();
  CHECK(run_checker(x, 1000, 3) == language_reference::checker_reference(x, 3));
  CHECK(run_checker(x, 1000, 1 << 21) == language_reference::checker_reference(x, 1 << 21));
}

// The children: hidden ([.]), run only by name from the cases below.
TEST_CASE("child: a device_assert fails on the GPU", "[.][assert-child]") {
  auto x = checker_input();
  x[2 * 128 + 5 * 8 + 3] = 1000;  // program 2, element (5, 3)
  run_checker(x, 1000, 3);
}
TEST_CASE("child: a multiply overflows in debug mode on the GPU", "[.][overflow-child]") {
  auto x = checker_input();
  x[128 + 2 * 8 + 7] = 1024;  // 1024 * 2^21 = 2^31
  run_checker(x, 2000, 1 << 21);
}

TEST_CASE("GPU device_assert: a failure names the program, the element and the line, then traps", "[gpu][shape][assert]") {
  check_child_trapped("[assert-child]",
                      {"pid (2, 0, 0) idx (5, 3) device_assert at ", site(1), "failed: x below the limit"});
}

TEST_CASE("GPU debug mode: a signed overflow names the program, the element and the line, then traps", "[gpu][shape][assert]") {
  check_child_trapped("[overflow-child]", {"pid (1, 0, 0) idx (2, 7) i32 overflow in mul at ", site(2)});
}

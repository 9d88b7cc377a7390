// Every example kernel (examples/kernels.hpp) through the public launch path on the interpreter,
// on random inputs with poisoned outputs, against the example's plain C++ reference. Buffers are
// exactly as large as the data, so the interpreter's bounds checks catch any stray access.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "examples_util.hpp"

namespace ts = tessera;
using namespace tessera::test;

namespace {

constexpr ts::Executor kInterp = ts::Executor::Interpreter;
const std::int32_t kSizes[] = {1, 1000, (1 << 20) + 3};

}  // namespace

TEST_CASE("example vector_add on the interpreter matches the host reference bit for bit", "[pipeline][examples]") {
  auto add = ex::make_vector_add();
  for (std::int32_t n : kSizes) {
    INFO("n = " << n << ", seed " << kExamplesSeed);
    std::mt19937 rng(kExamplesSeed + static_cast<std::uint32_t>(n));
    const auto hx = random_values<float>(n, rng, -100.f, 100.f), hy = random_values<float>(n, rng, -100.f, 100.f);
    auto x = ts::Buffer<float>::from_host(hx, kInterp), y = ts::Buffer<float>::from_host(hy, kInterp);
    auto out = ts::Buffer<float>::from_host(poisoned<float>(n), kInterp);
    add[ex::vector_add_options(n, kInterp)](x, y, out, n);
    const auto got = out.to_host();
    std::vector<float> want(n);
    ex::vector_add_reference(hx, hy, want);
    std::int64_t bad = 0, first_bad = -1;
    for (std::int32_t i = 0; i < n; ++i)
      if (!same_bits(got[i], want[i]) && bad++ == 0) first_bad = i;
    INFO("first mismatch at " << first_bad);
    REQUIRE(bad == 0);
  }
}

TEST_CASE("example fused_elu on the interpreter is within f16 precision of the host reference",
          "[pipeline][examples][f16]") {
  auto elu = ex::make_fused_elu();
  for (auto [scale, bias] : {std::pair{1.5f, -0.25f}, std::pair{0.5f, 1.0f}, std::pair{-2.0f, 0.0f}})
    for (std::int32_t n : kSizes) {
      INFO("n = " << n << ", scale " << scale << ", bias " << bias << ", seed " << kExamplesSeed);
      std::mt19937 rng(kExamplesSeed + static_cast<std::uint32_t>(n));
      const auto hx = random_values<ts::half>(n, rng, -3.f, 3.f);
      auto x = ts::Buffer<ts::half>::from_host(hx, kInterp);
      auto out = ts::Buffer<ts::half>::from_host(poisoned<ts::half>(n), kInterp);
      elu[ex::fused_elu_options(n, kInterp)](x, out, scale, bias, n);
      const auto got = out.to_host();
      std::vector<float> want(n);
      ex::fused_elu_reference(hx, want, scale, bias);
      std::int64_t bad = 0, first_bad = -1;
      for (std::int32_t i = 0; i < n; ++i) {
        const double err = std::abs(static_cast<double>(static_cast<float>(got[i])) - want[i]) /
                           std::max(1.0, std::abs(static_cast<double>(want[i])));
        if (!(err <= 1e-2) && bad++ == 0) first_bad = i;  // !(<=): a NaN (the poison) fails too
      }
      INFO("first mismatch at " << first_bad << (first_bad >= 0 ? ": got " + std::to_string(static_cast<float>(got[first_bad])) + ", want " + std::to_string(want[first_bad]) : std::string()));
      REQUIRE(bad == 0);
    }
}

TEST_CASE("example broadcast_2d on the interpreter matches the host reference and leaves the padding",
          "[pipeline][examples][2d]") {
  auto affine = ex::make_broadcast_2d();
  // The example's shape, exact multiples of the 32 x 64 block, one past them, single rows and
  // columns, and row strides with and without padding.
  const std::array<std::int32_t, 2> shapes[] = {{1000, 300}, {32, 64}, {33, 65}, {31, 63}, {1, 1000},
                                                {1000, 1},   {1, 1},   {77, 129}, {64, 200}};
  for (auto [m, n] : shapes)
    for (std::int32_t pad : {0, 3}) {
      const std::int32_t stride = n + pad;
      INFO(m << " x " << n << ", stride " << stride << ", seed " << kExamplesSeed);
      std::mt19937 rng(kExamplesSeed + static_cast<std::uint32_t>(m * 7919 + n));
      const std::size_t elems = static_cast<std::size_t>(m) * stride;
      const auto hx = random_values<float>(elems, rng, -1.f, 1.f);
      const auto hs = random_values<float>(m, rng, -1.f, 1.f), hb = random_values<float>(n, rng, -1.f, 1.f);
      auto x = ts::Buffer<float>::from_host(hx, kInterp), s = ts::Buffer<float>::from_host(hs, kInterp),
           b = ts::Buffer<float>::from_host(hb, kInterp);
      auto out = ts::Buffer<float>::from_host(poisoned<float>(elems), kInterp);
      affine[ex::broadcast_2d_options(m, n, kInterp)](x, s, b, out, m, n, stride);
      const auto got = out.to_host();
      auto want = poisoned<float>(elems);  // the padding must still hold the poison
      ex::broadcast_2d_reference(hx, hs, hb, want, m, n, stride);
      std::int64_t bad = 0, first_bad = -1;
      for (std::size_t i = 0; i < elems; ++i)
        if (!same_bits(got[i], want[i]) && bad++ == 0) first_bad = static_cast<std::int64_t>(i);
      INFO("first mismatch at element " << first_bad << " (row " << (first_bad < 0 ? -1 : first_bad / stride)
                                        << ", column " << (first_bad < 0 ? -1 : first_bad % stride) << ")");
      REQUIRE(bad == 0);
    }
}

TEST_CASE("an example kernel launched again with the same specialization compiles nothing",
          "[pipeline][examples]") {
  // The tests above rely on the launch path; this pins that a second launch of the same
  // specialization is served from the kernel's cache (the interpreter counts a trace as a compile).
  auto add = ex::make_vector_add();
  const std::int32_t n = 1000;
  std::mt19937 rng(kExamplesSeed);
  auto x = ts::Buffer<float>::from_host(random_values<float>(n, rng, -1.f, 1.f), kInterp);
  auto y = ts::Buffer<float>::from_host(random_values<float>(n, rng, -1.f, 1.f), kInterp);
  ts::Buffer<float> out(n, kInterp);
  add[ex::vector_add_options(n, kInterp)](x, y, out, n);
  const auto before = ts::runtime_stats();
  add[ex::vector_add_options(n, kInterp)](x, y, out, n);
  const auto after = ts::runtime_stats();
  CHECK(after.compiles == before.compiles);
  CHECK(after.launches == before.launches + 1);
}

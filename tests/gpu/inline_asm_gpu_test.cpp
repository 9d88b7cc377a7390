// ts::inline_asm_elementwise on the GPU: PTX run per element, per four packed bytes and with two
// results, against host references (exact: the assembly's operations are integer ops and a
// correctly rounded f32 multiply). Block sizes where a thread holds fewer elements than `pack`
// (the padded instance) and more.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "tests/common/inline_asm_kernels.hpp"

namespace ts = tessera;
namespace kernels = tessera::test::inline_asm_kernels;

namespace {
constexpr std::uint32_t kSeed = 20261204;
constexpr ts::Executor kCuda = ts::Executor::Cuda;

ts::LaunchOptions opts(std::int64_t n, std::int64_t block) {
  return {.grid = {ts::cdiv(n, block)}, .meta = {{"BLOCK", block}}, .num_warps = 4, .executor = kCuda};
}
}  // namespace

TEST_CASE("GPU inline assembly: one instance per element, i32 and f32 registers", "[gpu][inline_asm]") {
  std::mt19937 rng(kSeed);
  const std::int64_t n = 3001;
  std::vector<std::int32_t> x(n);
  std::vector<float> a(n), b(n);
  std::uniform_int_distribution<std::int32_t> di(INT32_MIN, INT32_MAX);
  std::uniform_real_distribution<float> df(-1e3f, 1e3f);
  for (std::int64_t i = 0; i < n; ++i) x[i] = di(rng), a[i] = df(rng), b[i] = df(rng);
  auto k = kernels::make_scalar_ops();
  for (std::int64_t block : {64, 256, 1024}) {
    INFO("BLOCK " << block);
    auto dx = ts::Buffer<std::int32_t>::from_host(x, kCuda);
    auto da = ts::Buffer<float>::from_host(a, kCuda), db = ts::Buffer<float>::from_host(b, kCuda);
    auto shift = ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>(n, -1), kCuda);
    auto prod = ts::Buffer<float>::from_host(std::vector<float>(n, -1.f), kCuda);
    k[opts(n, block)](dx, da, db, shift, prod, n);
    const auto s = shift.to_host();
    const auto p = prod.to_host();
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const auto want_s = static_cast<std::int32_t>(static_cast<std::uint32_t>(x[i]) << 3);
      bad += s[i] != want_s || p[i] != a[i] * b[i];
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("GPU inline assembly: four bytes packed in one register per instance", "[gpu][inline_asm]") {
  std::mt19937 rng(kSeed + 1);
  const std::int64_t n = 4099;
  std::vector<std::uint8_t> x(n);
  std::uniform_int_distribution<int> d(0, 255);
  for (auto& v : x) v = static_cast<std::uint8_t>(d(rng));
  auto k = kernels::make_packed_bytes();
  for (std::int64_t block : {64, 128, 512, 2048}) {  // 64 and 128: fewer than four bytes per thread
    INFO("BLOCK " << block);
    auto dx = ts::Buffer<std::uint8_t>::from_host(x, kCuda);
    auto out = ts::Buffer<std::uint8_t>::from_host(std::vector<std::uint8_t>(n, 0xEE), kCuda);
    k[opts(n, block)](dx, out, n);
    const auto y = out.to_host();
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < n; ++i) bad += y[i] != static_cast<std::uint8_t>((x[i] & 0x1f) << 3);
    CHECK(bad == 0);
  }
}

TEST_CASE("GPU inline assembly: two results from one instance", "[gpu][inline_asm]") {
  std::mt19937_64 rng(kSeed + 2);
  const std::int64_t n = 2000;
  std::vector<std::int64_t> v(n);
  for (auto& e : v) e = static_cast<std::int64_t>(rng());
  auto k = kernels::make_two_results();
  auto dv = ts::Buffer<std::int64_t>::from_host(v, kCuda);
  auto lo = ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>(n, 0), kCuda);
  auto hi = ts::Buffer<std::int32_t>::from_host(std::vector<std::int32_t>(n, 0), kCuda);
  k[opts(n, 256)](dv, lo, hi, n);
  const auto l = lo.to_host();
  const auto h = hi.to_host();
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto u = static_cast<std::uint64_t>(v[i]);
    bad += l[i] != static_cast<std::int32_t>(static_cast<std::uint32_t>(u)) ||
           h[i] != static_cast<std::int32_t>(static_cast<std::uint32_t>(u >> 32));
  }
  CHECK(bad == 0);
}

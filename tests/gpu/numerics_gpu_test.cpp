// Numerics the interpreter defines exactly, on the GPU: float % as C's fmod at any quotient (with
// libdevice's fmod and with tessera's own, TESSERA_LIBDEVICE=0), and the Philox random numbers
// (ts::randint4x and ts::rand bit for bit against a plain C++ Philox-4x32-10 checked against
// Random123's known answers in tests/host/host_random_test.cpp; ts::randn within the GPU's f32
// log, sqrt and cos).
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compare.hpp"
#include "tests/common/numerics_reference.hpp"

namespace ts = tessera;

namespace {

template <class T, class Bits>
void check_rem(bool libdevice) {
  const std::size_t n = 1 << 16;
  std::mt19937_64 rng(2026);
  std::vector<T> a(n), b(n), want(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto p = static_cast<Bits>(rng()), q = static_cast<Bits>(rng());
    std::memcpy(&a[i], &p, sizeof(T));
    std::memcpy(&b[i], &q, sizeof(T));
    if (i % 2 == 0) b[i] = static_cast<T>(static_cast<double>(rng() % 1000) - 500.0);  // large quotients
  }
  // The cases: f32 1e10 % 3 is 1 (an x - trunc(x/y)*y lowering gives 256), f64 1e300 % 7 is 1.
  a[1] = static_cast<T>(std::is_same_v<T, float> ? 1e10 : 1e300), b[1] = 3;
  a[3] = static_cast<T>(std::is_same_v<T, float> ? 1e10 : 1e300), b[3] = 7;
  for (std::size_t i = 0; i < n; ++i) want[i] = static_cast<T>(std::fmod(static_cast<double>(a[i]), static_cast<double>(b[i])));
  ::setenv("TESSERA_LIBDEVICE", libdevice ? "" : "0", 1);
  auto k = numerics_reference::make_rem<T>();  // compiled in this libdevice mode
  auto da = ts::Buffer<T>::from_host(a, ts::Executor::Cuda), db = ts::Buffer<T>::from_host(b, ts::Executor::Cuda);
  auto out = ts::Buffer<T>::from_host(std::vector<T>(n, T(12345)), ts::Executor::Cuda);
  k[{.grid = {ts::cdiv(static_cast<std::int64_t>(n), 256)}, .num_warps = 4, .executor = ts::Executor::Cuda}](
      da, db, out, static_cast<std::int32_t>(n));
  ts::synchronize(ts::Executor::Cuda);
  ::unsetenv("TESSERA_LIBDEVICE");
  gpu_test::check_equal(std::string(sizeof(T) == 4 ? "f32" : "f64") + " % " + (libdevice ? "(libdevice)" : "(own)"),
                        out.to_host(), want);
}

using numerics_reference::Words;

}  // namespace

TEST_CASE("GPU float % is C's fmod, exact at any quotient", "[gpu][numerics]") {
  for (bool libdevice : {false, true}) {
    check_rem<float, std::uint32_t>(libdevice);
    check_rem<double, std::uint64_t>(libdevice);
  }
}

TEST_CASE("GPU randint4x and rand match Philox-4x32-10 bit for bit, randn the Box-Muller formula", "[gpu][numerics]") {
  auto k = ts::kernel("random_streams", [](ts::Ptr<std::int32_t> offsets, ts::Ptr<std::uint32_t> words,
                                           ts::Ptr<float> uniform, ts::Ptr<float> normal, ts::Int64 seed, ts::Int n) {
    auto offs = ts::program_id(0) * 1024 + ts::arange(0, 1024);
    auto mask = offs < n;
    auto off = ts::load(offsets + offs, mask);
    auto r = ts::randint4x(seed, off);
    for (int w = 0; w < 4; ++w) ts::store(words + offs * 4 + w, r[static_cast<std::size_t>(w)], mask);
    ts::store(uniform + offs, ts::rand(seed, off), mask);
    ts::store(normal + offs, ts::randn(seed, off), mask);
  });
  const std::size_t n = 1 << 20;
  std::mt19937 rng(11);
  std::vector<std::int32_t> offsets(n);
  for (std::size_t i = 0; i < n; ++i) offsets[i] = i < n / 2 ? static_cast<std::int32_t>(i) : static_cast<std::int32_t>(rng());
  for (std::int64_t seed : {std::int64_t{42}, std::int64_t{-7}, std::int64_t{0x123456789abcdefLL}}) {
    const auto k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(static_cast<std::uint64_t>(seed) >> 32);
    auto d_off = ts::Buffer<std::int32_t>::from_host(offsets, ts::Executor::Cuda);
    auto d_words = ts::Buffer<std::uint32_t>::from_host(std::vector<std::uint32_t>(4 * n, 7), ts::Executor::Cuda);
    auto d_uniform = ts::Buffer<float>::from_host(std::vector<float>(n, NAN), ts::Executor::Cuda);
    auto d_normal = ts::Buffer<float>::from_host(std::vector<float>(n, NAN), ts::Executor::Cuda);
    k[{.grid = {static_cast<std::int64_t>(n / 1024)}, .num_warps = 4, .executor = ts::Executor::Cuda}](
        d_off, d_words, d_uniform, d_normal, seed, static_cast<std::int32_t>(n));
    ts::synchronize(ts::Executor::Cuda);
    std::vector<std::uint32_t> want_words(4 * n);
    std::vector<float> want_uniform(n);
    std::vector<double> want_normal(n), normal_bound(n);
    for (std::size_t i = 0; i < n; ++i) {
      const Words w = numerics_reference::philox({static_cast<std::uint32_t>(offsets[i]), 0, 0, 0}, k0, k1);
      for (std::size_t j = 0; j < 4; ++j) want_words[4 * i + j] = w[j];
      want_uniform[i] = numerics_reference::uniform(w[0]);
      const double u1 = std::max(1.0e-7f, numerics_reference::uniform(w[0]));
      const double l = -2.0 * std::log(u1);
      want_normal[i] = std::sqrt(l) * std::cos(static_cast<double>(6.283185307179586f) * numerics_reference::uniform(w[1]));
      // The GPU's log (lg2.approx) is off by up to about 2^-22 absolute, which sqrt turns into
      // 2^-22 / sqrt(l) near u1 = 1; cos and the rest add a few f32 ulps. Where l < 1e-5 (u1
      // within 5e-6 of 1, a few elements per million) the approximate log may even reach 0 or
      // change sign: those elements are not held to a bound (Triton's tl.randn shares this).
      normal_bound[i] = l < 1e-5 ? INFINITY : 4e-6 * (1 + std::fabs(want_normal[i])) + 4e-7 / std::sqrt(l);
    }
    const std::string s = "seed " + std::to_string(seed);
    gpu_test::check_equal("randint4x, " + s, d_words.to_host(), want_words);
    gpu_test::check_bits("rand, " + s, d_uniform.to_host(), want_uniform);
    std::vector<float> got_normal = d_normal.to_host();
    for (std::size_t i = 0; i < n; ++i)
      if (std::isinf(normal_bound[i])) got_normal[i] = static_cast<float>(want_normal[i]);  // not held (above)
    gpu_test::check_report("randn, " + s, gpu_test::compare_with(got_normal, want_normal,
                                                                 [&](std::size_t i) { return normal_bound[i]; }));
  }
}

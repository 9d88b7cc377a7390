// The canonical kernel: out = x + y with program_id * BLOCK + arange and a tail mask.
#include <catch2/catch.hpp>

#include <random>

#include "interp_test_util.hpp"

using namespace tessera;
using namespace tessera::test;

namespace {

constexpr std::int64_t kBlock = 1024;

// add(x, y, out, n): offs = pid * BLOCK + arange(BLOCK); mask = offs < n; out[offs] = x[offs] + y[offs].
std::unique_ptr<ir::Module> vector_add(DType d) {
  KernelBuilder k("add");
  Value* x = k.arg(Type::pointer(d), "x");
  Value* y = k.arg(Type::pointer(d), "y");
  Value* out = k.arg(Type::pointer(d), "out");
  Value* n = k.arg(Type::scalar(DType::I32), "n");
  Value* base = k.binary(OpKind::Mul, k.program_id(0), k.i32(kBlock));
  Value* offs = k.binary(OpKind::Add, k.splat(base, {kBlock}), k.arange(kBlock));
  Value* mask = k.compare(OpKind::CmpLt, offs, k.splat(n, {kBlock}));
  Value* xv = k.load(k.addptr(k.splat(x, {kBlock}), offs), mask);
  Value* yv = k.load(k.addptr(k.splat(y, {kBlock}), offs), mask);
  k.store(k.addptr(k.splat(out, {kBlock}), offs), k.binary(OpKind::Add, xv, yv), mask);
  k.ret();
  return std::move(k.m);
}

Dim3 grid_for(std::int64_t n) { return {static_cast<std::uint32_t>((n + kBlock - 1) / kBlock), 1, 1}; }

}  // namespace

TEST_CASE("vector add matches a plain loop on f32", "[interp][vector_add]") {
  const auto m = vector_add(DType::F32);
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{(1 << 20) + 3}}) {
    INFO("n = " << n << ", seed " << kSeed);
    std::mt19937 rng(kSeed);
    std::uniform_real_distribution<float> dist(-100.f, 100.f);
    std::vector<float> x(n), y(n), out(n, -1.f);
    for (auto& v : x) v = dist(rng);
    for (auto& v : y) v = dist(rng);
    // Buffers of exactly n elements: the tail lanes of the last program are masked off and
    // must not be flagged as out of bounds.
    std::vector<ArgValue> args{buffer_arg(x, DType::F32), buffer_arg(y, DType::F32), buffer_arg(out, DType::F32),
                               ArgValue::integer(n, DType::I32)};
    interp::run(*m, grid_for(n), args);
    std::int64_t bad = 0, first_bad = -1;
    for (std::int64_t i = 0; i < n; ++i)
      if (out[i] != x[i] + y[i] && bad++ == 0) first_bad = i;
    INFO("first mismatch at " << first_bad);
    REQUIRE(bad == 0);
  }
}

TEST_CASE("vector add on raw pointers of unknown size", "[interp][vector_add]") {
  const auto m = vector_add(DType::I32);
  const std::int64_t n = 3000;
  std::vector<std::int32_t> x(n), y(n), out(n, 0);
  for (std::int64_t i = 0; i < n; ++i) x[i] = static_cast<std::int32_t>(i), y[i] = static_cast<std::int32_t>(2 * i);
  std::vector<ArgValue> args{ArgValue::pointer(x.data(), DType::I32), ArgValue::pointer(y.data(), DType::I32),
                             ArgValue::pointer(out.data(), DType::I32), ArgValue::integer(n, DType::I32)};
  interp::run(*m, grid_for(n), args);
  for (std::int64_t i = 0; i < n; ++i) REQUIRE(out[i] == 3 * i);
}

TEST_CASE("vector add on f16 and bf16 rounds every sum to nearest even", "[interp][vector_add][f16]") {
  for (DType d : {DType::F16, DType::BF16}) {
    const bool is_f16 = d == DType::F16;
    INFO((is_f16 ? "f16" : "bf16") << ", seed " << kSeed);
    const auto m = vector_add(d);
    const std::int64_t n = 5000;
    std::mt19937 rng(kSeed);
    std::uniform_real_distribution<double> dist(-3.0, 3.0);
    std::vector<std::uint16_t> x(n), y(n), out(n);
    for (std::int64_t i = 0; i < n; ++i) {
      // Mix magnitudes so that sums land on ties and in the subnormal range too.
      const double scale = std::ldexp(1.0, static_cast<int>(rng() % 30) - 20);
      x[i] = is_f16 ? ref_f16(dist(rng) * scale) : ref_bf16(dist(rng) * scale);
      y[i] = is_f16 ? ref_f16(dist(rng) * scale) : ref_bf16(dist(rng) * scale);
    }
    std::vector<ArgValue> args{buffer_arg(x, d), buffer_arg(y, d), buffer_arg(out, d), ArgValue::integer(n, DType::I32)};
    interp::run(*m, grid_for(n), args);
    for (std::int64_t i = 0; i < n; ++i) {
      // The exact sum of two 16-bit floats fits a double, so this is a single correct rounding.
      const double exact = is_f16 ? ref_f16_value(x[i]) + ref_f16_value(y[i]) : ref_bf16_value(x[i]) + ref_bf16_value(y[i]);
      const std::uint16_t want = is_f16 ? ref_f16(exact) : ref_bf16(exact);
      INFO("i = " << i << ", x bits " << x[i] << ", y bits " << y[i]);
      REQUIRE(out[i] == want);
    }
  }
}

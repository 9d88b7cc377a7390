// Integer and float arithmetic, compares, unary ops and select, against the rules of ops.def.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "elementwise_util.hpp"

using namespace tessera;
using namespace tessera::test;

namespace {
constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
}  // namespace

TEST_CASE("integer add, sub and mul wrap in two's complement", "[interp][int]") {
  using V = std::vector<std::int32_t>;
  CHECK(run_binary(OpKind::Add, DType::I32, V{kMax, -1, kMin}, V{1, 1, -1}) == V{kMin, 0, kMax});
  CHECK(run_binary(OpKind::Mul, DType::I32, V{0x10000, kMin, 3}, V{0x10000, -1, -5}) == V{0, kMin, -15});
  CHECK(run_binary(OpKind::Sub, DType::I32, V{kMin}, V{1}) == V{kMax});
  using V8 = std::vector<std::int8_t>;
  CHECK(run_binary(OpKind::Add, DType::I8, V8{127, -128}, V8{1, -1}) == V8{-128, 127});
  using V16 = std::vector<std::int16_t>;
  CHECK(run_binary(OpKind::Mul, DType::I16, V16{300, -1}, V16{300, -32768}) == V16{24464, -32768});
  using VU8 = std::vector<std::uint8_t>;
  CHECK(run_binary(OpKind::Add, DType::U8, VU8{200, 0}, VU8{100, 0}) == VU8{44, 0});

  INFO("seed " << kSeed);
  std::mt19937 rng(kSeed);
  V a(777), b(777);
  for (auto& v : a) v = static_cast<std::int32_t>(rng());
  for (auto& v : b) v = static_cast<std::int32_t>(rng());
  const V sum = run_binary(OpKind::Add, DType::I32, a, b), prod = run_binary(OpKind::Mul, DType::I32, a, b);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("a = " << a[i] << ", b = " << b[i]);
    REQUIRE(sum[i] == static_cast<std::int32_t>(static_cast<std::uint32_t>(a[i]) + static_cast<std::uint32_t>(b[i])));
    REQUIRE(prod[i] == static_cast<std::int32_t>(static_cast<std::uint32_t>(a[i]) * static_cast<std::uint32_t>(b[i])));
  }
}

TEST_CASE("integer division: truncation, x/0 = -1, x%0 = x, INT_MIN/-1 wraps", "[interp][int]") {
  using V = std::vector<std::int32_t>;
  const V a{7, -7, 5, kMin, 0, -5};
  const V b{2, 2, 0, -1, 0, 0};
  CHECK(run_binary(OpKind::Div, DType::I32, a, b) == V{3, -3, -1, kMin, -1, -1});
  CHECK(run_binary(OpKind::Rem, DType::I32, a, b) == V{1, -1, 5, 0, 0, -5});
  using VU = std::vector<std::uint32_t>;
  CHECK(run_binary(OpKind::Div, DType::U32, VU{5, 0xFFFFFFFFu}, VU{0, 2}) == VU{0xFFFFFFFFu, 0x7FFFFFFFu});
  CHECK(run_binary(OpKind::Rem, DType::U32, VU{5, 0xFFFFFFFFu}, VU{0, 10}) == VU{5, 5});
  using VU8 = std::vector<std::uint8_t>;
  CHECK(run_binary(OpKind::Div, DType::U8, VU8{9}, VU8{0}) == VU8{255});
  CHECK(run_binary(OpKind::Div, DType::I1, VU8{1, 0, 1}, VU8{0, 0, 1}) == VU8{1, 1, 1});  // all ones of 1 bit
}

TEST_CASE("shifts: amounts modulo the width, arithmetic or logical right shift", "[interp][int]") {
  using V = std::vector<std::int32_t>;
  CHECK(run_binary(OpKind::Shl, DType::I32, V{1, 1, 3}, V{33, 31, -1}) == V{2, kMin, kMin});
  CHECK(run_binary(OpKind::Shr, DType::I32, V{-8, kMin, 16}, V{1, 31, 36}) == V{-4, -1, 1});
  using VU = std::vector<std::uint32_t>;
  CHECK(run_binary(OpKind::Shr, DType::U32, VU{0x80000000u, 0x80000000u}, VU{31, 32}) == VU{1, 0x80000000u});
  using V8 = std::vector<std::int8_t>;
  CHECK(run_binary(OpKind::Shl, DType::I8, V8{1, 1}, V8{9, 7}) == V8{2, -128});
}

TEST_CASE("bitwise and logical ops on i1", "[interp][int]") {
  using V = std::vector<std::uint8_t>;
  const V a{0, 0, 1, 1}, b{0, 1, 0, 1};
  CHECK(run_binary(OpKind::Add, DType::I1, a, b) == V{0, 1, 1, 0});
  CHECK(run_binary(OpKind::Mul, DType::I1, a, b) == V{0, 0, 0, 1});
  CHECK(run_binary(OpKind::Xor, DType::I1, a, b) == V{0, 1, 1, 0});
  CHECK(run_binary(OpKind::Shr, DType::I1, a, b) == a);  // shift by (b mod 1) = 0
  CHECK(run_unary<std::uint8_t>(OpKind::Not, DType::I1, a, DType::I1) == V{1, 1, 0, 0});
  CHECK(run_unary<std::uint8_t>(OpKind::Neg, DType::I1, a, DType::I1) == a);
}

TEST_CASE("min and max: a NaN operand yields the other, ints per signedness", "[interp][float]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto mn = run_binary(OpKind::Min, DType::F32, std::vector<float>{nan, 1.f, nan, -2.f}, std::vector<float>{1.f, nan, nan, 3.f});
  CHECK(mn[0] == 1.f);
  CHECK(mn[1] == 1.f);
  CHECK(std::isnan(mn[2]));
  CHECK(mn[3] == -2.f);
  const auto mx = run_binary(OpKind::Max, DType::F32, std::vector<float>{nan, 2.f}, std::vector<float>{2.f, nan});
  CHECK(mx == std::vector<float>{2.f, 2.f});
  CHECK(run_binary(OpKind::Min, DType::I32, std::vector<std::int32_t>{-1}, std::vector<std::int32_t>{1}) == std::vector<std::int32_t>{-1});
  CHECK(run_binary(OpKind::Min, DType::U32, std::vector<std::uint32_t>{0xFFFFFFFFu}, std::vector<std::uint32_t>{1}) ==
        std::vector<std::uint32_t>{1});
}

TEST_CASE("compares: ordered for floats except cmp_ne, signedness per dtype", "[interp][compare]") {
  using V = std::vector<std::uint8_t>;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> a{nan, 1.f, 1.f, 2.f}, b{1.f, nan, 1.f, 1.f};
  CHECK(run_binary<std::uint8_t>(OpKind::CmpEq, DType::F32, a, b, DType::I1) == V{0, 0, 1, 0});
  CHECK(run_binary<std::uint8_t>(OpKind::CmpNe, DType::F32, a, b, DType::I1) == V{1, 1, 0, 1});
  CHECK(run_binary<std::uint8_t>(OpKind::CmpLt, DType::F32, a, b, DType::I1) == V{0, 0, 0, 0});
  CHECK(run_binary<std::uint8_t>(OpKind::CmpLe, DType::F32, a, b, DType::I1) == V{0, 0, 1, 0});
  CHECK(run_binary<std::uint8_t>(OpKind::CmpGt, DType::F32, a, b, DType::I1) == V{0, 0, 0, 1});
  CHECK(run_binary<std::uint8_t>(OpKind::CmpGe, DType::F32, a, b, DType::I1) == V{0, 0, 1, 1});
  CHECK(run_binary<std::uint8_t>(OpKind::CmpLt, DType::I32, std::vector<std::int32_t>{-1}, std::vector<std::int32_t>{1}, DType::I1) == V{1});
  CHECK(run_binary<std::uint8_t>(OpKind::CmpLt, DType::U32, std::vector<std::uint32_t>{0xFFFFFFFFu},
                                 std::vector<std::uint32_t>{1}, DType::I1) == V{0});
}

TEST_CASE("f16 and bf16 mul, div and sqrt round to nearest even after each op", "[interp][f16]") {
  INFO("seed " << kSeed);
  std::mt19937 rng(kSeed);
  for (DType d : {DType::F16, DType::BF16}) {
    const bool is_f16 = d == DType::F16;
    auto round = [&](double v) { return is_f16 ? ref_f16(v) : ref_bf16(v); };
    auto value = [&](std::uint16_t b) { return is_f16 ? ref_f16_value(b) : ref_bf16_value(b); };
    std::uniform_real_distribution<double> dist(0.01, 100.0);
    std::vector<std::uint16_t> a(3000), b(3000);
    for (auto& v : a) v = round((rng() & 1 ? -1 : 1) * dist(rng));
    for (auto& v : b) v = round(dist(rng));
    const auto prod = run_binary(OpKind::Mul, d, a, b);
    const auto quot = run_binary(OpKind::Div, d, a, b);
    const auto root = run_unary<std::uint16_t>(OpKind::Sqrt, d, b, d);
    for (std::size_t i = 0; i < a.size(); ++i) {
      INFO((is_f16 ? "f16" : "bf16") << " a bits " << a[i] << ", b bits " << b[i]);
      REQUIRE(prod[i] == round(value(a[i]) * value(b[i])));  // the product is exact in a double
      REQUIRE(quot[i] == round(value(a[i]) / value(b[i])));  // 53 >= 2*11+2: no double-rounding error
      REQUIRE(root[i] == round(std::sqrt(value(b[i]))));
    }
  }
}

TEST_CASE("unary ops: neg and abs wrap at INT_MIN, float exp/log/abs", "[interp][unary]") {
  using V = std::vector<std::int32_t>;
  CHECK(run_unary<std::int32_t>(OpKind::Neg, DType::I32, V{kMin, 5}, DType::I32) == V{kMin, -5});
  CHECK(run_unary<std::int32_t>(OpKind::Abs, DType::I32, V{kMin, -5, 5}, DType::I32) == V{kMin, 5, 5});
  CHECK(run_unary<std::int32_t>(OpKind::Not, DType::I32, V{0, -1}, DType::I32) == V{-1, 0});
  const auto e = run_unary<float>(OpKind::Exp, DType::F32, std::vector<float>{0.f, 1.f}, DType::F32);
  CHECK(e[0] == 1.f);
  CHECK(e[1] == Approx(2.718281828f));
  CHECK(run_unary<float>(OpKind::Log, DType::F32, std::vector<float>{1.f}, DType::F32) == std::vector<float>{0.f});
  const auto ab = run_unary<float>(OpKind::Abs, DType::F32, std::vector<float>{-0.f, -3.5f}, DType::F32);
  CHECK(f32_bits(ab[0]) == 0u);
  CHECK(ab[1] == 3.5f);
  CHECK_THROWS_AS(run_unary<float>(OpKind::Not, DType::F32, std::vector<float>{1.f}, DType::F32), InternalError);
  CHECK_THROWS_AS(run_unary<std::int32_t>(OpKind::Exp, DType::I32, V{1}, DType::I32), InternalError);
}

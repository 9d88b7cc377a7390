// cast: saturating float->int with NaN -> 0, int widening and narrowing, ->i1, and single
// round-to-nearest-even rounding into f32, f16 and bf16.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "elementwise_util.hpp"

using namespace tessera;
using namespace tessera::test;

namespace {
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
}  // namespace

TEST_CASE("float to int truncates toward zero, saturates, and maps NaN to 0", "[interp][cast]") {
  const std::vector<float> in{1e10f, -1e10f, kNan, -1.7f, 2.9f, 2147483520.f, 2147483648.f, -0.5f};
  CHECK(run_cast<std::int32_t>(DType::F32, in, DType::I32) ==
        std::vector<std::int32_t>{kMax, kMin, 0, -1, 2, 2147483520, kMax, 0});
  CHECK(run_cast<std::uint8_t>(DType::F32, std::vector<float>{300.f, -5.f, 255.9f, kNan, 3.5f}, DType::U8) ==
        std::vector<std::uint8_t>{255, 0, 255, 0, 3});
  CHECK(run_cast<std::int64_t>(DType::F64, std::vector<double>{1e300, -1e300, 9.2e18}, DType::I64) ==
        std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min(),
                                  9200000000000000000LL});
  // f16 65504 (the largest finite) to i8 saturates.
  CHECK(run_cast<std::int8_t>(DType::F16, std::vector<std::uint16_t>{0x7BFF, 0xFBFF}, DType::I8) ==
        std::vector<std::int8_t>{127, -128});
}

TEST_CASE("int to int sign-extends signed sources, zero-extends unsigned ones, truncates", "[interp][cast]") {
  CHECK(run_cast<std::int8_t>(DType::I32, std::vector<std::int32_t>{300, -129, 127}, DType::I8) ==
        std::vector<std::int8_t>{44, 127, 127});
  CHECK(run_cast<std::int32_t>(DType::I8, std::vector<std::int8_t>{-1, -128, 5}, DType::I32) ==
        std::vector<std::int32_t>{-1, -128, 5});
  CHECK(run_cast<std::int32_t>(DType::U8, std::vector<std::uint8_t>{255, 128}, DType::I32) ==
        std::vector<std::int32_t>{255, 128});
  CHECK(run_cast<std::uint32_t>(DType::I8, std::vector<std::int8_t>{-1}, DType::U32) ==
        std::vector<std::uint32_t>{0xFFFFFFFFu});
  CHECK(run_cast<std::int64_t>(DType::U32, std::vector<std::uint32_t>{0xFFFFFFFFu}, DType::I64) ==
        std::vector<std::int64_t>{0xFFFFFFFFLL});
  CHECK(run_cast<std::int32_t>(DType::I1, std::vector<std::uint8_t>{1, 0}, DType::I32) == std::vector<std::int32_t>{1, 0});
}

TEST_CASE("cast to i1 is x != 0", "[interp][cast]") {
  CHECK(run_cast<std::uint8_t>(DType::F32, std::vector<float>{0.f, -0.f, kNan, 0.5f, -3.f}, DType::I1) ==
        std::vector<std::uint8_t>{0, 0, 1, 1, 1});
  CHECK(run_cast<std::uint8_t>(DType::I32, std::vector<std::int32_t>{0, 2, -1, 256}, DType::I1) ==
        std::vector<std::uint8_t>{0, 1, 1, 1});
}

TEST_CASE("int to float rounds once to nearest even", "[interp][cast]") {
  CHECK(run_cast<float>(DType::I32, std::vector<std::int32_t>{16777217, 16777219, -16777217}, DType::F32) ==
        std::vector<float>{16777216.f, 16777220.f, -16777216.f});
  // 2^24 + 2^16 + 1 is just above a bf16 midpoint; through f32 it would land on the midpoint
  // and round down to 2^24.
  const std::vector<std::int64_t> big{(1LL << 24) + (1LL << 16) + 1, (1LL << 62) + (1LL << 54) + 1, 65519, 65520};
  const auto bf = run_cast<std::uint16_t>(DType::I64, big, DType::BF16);
  CHECK(ref_bf16_value(bf[0]) == double((1LL << 24) + (1LL << 17)));
  CHECK(ref_bf16_value(bf[1]) == std::ldexp(1.0, 62) + std::ldexp(1.0, 55));
  const auto h = run_cast<std::uint16_t>(DType::I64, big, DType::F16);
  CHECK(h[2] == 0x7BFF);  // 65504
  CHECK(h[3] == 0x7C00);  // the overflow threshold rounds to infinity
}

TEST_CASE("float to float rounds once: f64 -> f16 does not double-round through f32", "[interp][cast]") {
  // 1 + 2^-11 is the f16 midpoint between 1 and 1 + 2^-10; a little above it rounds up, but
  // rounding to f32 first would land on the midpoint and round to even (down).
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  CHECK(run_cast<std::uint16_t>(DType::F64, std::vector<double>{x}, DType::F16) == std::vector<std::uint16_t>{0x3C01});
  // Overflow, ties and subnormals of f32 -> f16.
  const std::vector<float> special{65519.f, 65520.f, std::ldexp(1.f, -25), 3 * std::ldexp(1.f, -26), -0.f,
                                   std::numeric_limits<float>::infinity()};
  CHECK(run_cast<std::uint16_t>(DType::F32, special, DType::F16) ==
        std::vector<std::uint16_t>{0x7BFF, 0x7C00, 0x0000, 0x0001, 0x8000, 0x7C00});
  const auto nan16 = run_cast<std::uint16_t>(DType::F32, std::vector<float>{kNan}, DType::F16);
  CHECK((nan16[0] & 0x7C00) == 0x7C00);
  CHECK((nan16[0] & 0x03FF) != 0);
}

TEST_CASE("random f32 -> f16/bf16 -> f32 against a reference rounding", "[interp][cast][f16]") {
  INFO("seed " << kSeed);
  std::mt19937 rng(kSeed);
  std::vector<float> in(4096);
  for (auto& v : in) {
    do v = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));  // every exponent, subnormals too
    while (std::isnan(v));
  }
  const auto h = run_cast<std::uint16_t>(DType::F32, in, DType::F16);
  const auto b = run_cast<std::uint16_t>(DType::F32, in, DType::BF16);
  const auto h_back = run_cast<float>(DType::F16, h, DType::F32);
  const auto b_back = run_cast<double>(DType::BF16, b, DType::F64);
  for (std::size_t i = 0; i < in.size(); ++i) {
    INFO("input bits " << f32_bits(in[i]));
    REQUIRE(h[i] == ref_f16(in[i]));
    REQUIRE(b[i] == ref_bf16(in[i]));
    if (!std::isinf(ref_f16_value(h[i]))) REQUIRE(double(h_back[i]) == ref_f16_value(h[i]));
    if (!std::isinf(ref_bf16_value(b[i]))) REQUIRE(b_back[i] == ref_bf16_value(b[i]));
  }
}

TEST_CASE("cast between pointers and floats is rejected as an internal error", "[interp][cast]") {
  KernelBuilder k("bad_cast");
  Value* p = k.arg(Type::pointer(DType::F32), "p");
  k.op(OpKind::Cast, {p}, Type::scalar(DType::F32));
  k.ret();
  float x = 0;
  std::vector<ArgValue> args{ArgValue::pointer(&x, DType::F32)};
  CHECK_THROWS_AS(interp::run(*k.m, {1, 1, 1}, args), InternalError);
}

// Host-side pieces: half/bfloat16 conversions, kernel signatures and launch-argument conversion.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "dsl_test_util.hpp"

using namespace dsl_test;

TEST_CASE("half rounds to nearest even and converts back exactly", "[dsl][host]") {
  using ts::half;
  CHECK(half(1.0f).bits == 0x3c00);
  CHECK(half(-2.0f).bits == 0xc000);
  CHECK(half(65504.0f).bits == 0x7bff);
  CHECK(half(65520.0f).bits == 0x7c00);                          // rounds up to infinity
  CHECK(half(1.0f + 1.0f / 2048).bits == 0x3c00);               // tie: to even (down)
  CHECK(half(1.0f + 3.0f / 2048).bits == 0x3c02);               // tie: to even (up)
  CHECK(half(5.9604645e-8f).bits == 0x0001);                     // smallest subnormal
  CHECK(half(2.9802322e-8f).bits == 0x0000);                     // half of it: tie to even zero
  CHECK(std::isnan(static_cast<float>(half(std::numeric_limits<float>::quiet_NaN()))));
  for (std::uint32_t b = 0; b < 0x7c00; ++b) {                   // every finite positive half round-trips
    const half h = half::from_bits(static_cast<std::uint16_t>(b));
    REQUIRE(half(static_cast<float>(h)).bits == b);
  }
  static_assert(half(0.5f).bits == 0x3800, "constexpr conversion");
}

TEST_CASE("bfloat16 rounds to nearest even", "[dsl][host]") {
  using ts::bfloat16;
  CHECK(bfloat16(1.0f).bits == 0x3f80);
  CHECK(bfloat16(1.0f + 1.0f / 256).bits == 0x3f80);             // tie: to even
  CHECK(bfloat16(1.0f + 3.0f / 256).bits == 0x3f82);
  CHECK(static_cast<float>(bfloat16::from_bits(0x4049)) == 3.140625f);
  CHECK(std::isnan(static_cast<float>(bfloat16(std::numeric_limits<float>::quiet_NaN()))));
}

namespace {

auto make_sig() {
  return ts::kernel("sig", [](ts::Ptr<float> x, ts::Ptr<ts::half> h, ts::Int n, ts::Float alpha, ts::Int64 big) {
    ts::store(x, alpha + (n + big).to<float>() + ts::load(h).to<float>());
  });
}

struct FakeTensor {  // what torch::Tensor offers
  void* p;
  std::int64_t n;
  void* data_ptr() const { return p; }
  std::int64_t numel() const { return n; }
};

}  // namespace

TEST_CASE("kernel signatures become ArgSpecs", "[dsl][host]") {
  auto k = make_sig();
  const auto& args = k.def().args;
  REQUIRE(args.size() == 5);
  CHECK(args[1].dtype == ts::DType::Ptr);
  CHECK(args[1].pointee == ts::DType::F16);
  CHECK(args[3].dtype == ts::DType::F32);
  CHECK(args[4].dtype == ts::DType::I64);
  CHECK(k.def().where.line() > 0);
  k.do_not_specialize(2);
  CHECK(k.def().args[2].do_not_specialize);
  CHECK_THROWS_AS(k.do_not_specialize(9), ts::LaunchError);
}

TEST_CASE("launch arguments convert to ArgValues", "[dsl][host]") {
  auto k = make_sig();
  using K = decltype(k);
  std::vector<float> xs(10);
  std::array<ts::half, 4> hs{};
  auto v = K::arg_values(xs, hs, 7u, 2, std::int64_t{1} << 40);
  CHECK(v[0].kind == ts::ArgValue::Kind::Pointer);
  CHECK(v[0].p == xs.data());
  CHECK(v[0].bytes == 40);
  CHECK(v[0].dtype == ts::DType::F32);
  CHECK(v[1].bytes == 8);
  CHECK(v[1].dtype == ts::DType::F16);
  CHECK(v[2].kind == ts::ArgValue::Kind::Int);
  CHECK(v[2].i == 7);
  CHECK(v[3].kind == ts::ArgValue::Kind::Float);
  CHECK(v[3].f == 2.0);
  CHECK(v[4].i == std::int64_t{1} << 40);

  const float* cx = xs.data();
  FakeTensor t{xs.data(), 10};
  auto w = K::arg_values(t, nullptr, std::int8_t{-3}, 0.5f, 0);
  CHECK(w[0].bytes == 40);
  CHECK(w[1].p == nullptr);
  CHECK(w[2].i == -3);
  auto u = K::arg_values(cx, static_cast<void*>(hs.data()), 1, 1, 1);
  CHECK(u[0].bytes == 0);
  CHECK(u[1].p == hs.data());
  CHECK_THROWS_AS(K::arg_values(cx, nullptr, std::int64_t{1} << 40, 1, 1), ts::LaunchError);

  // Mismatches are compile errors; the constraint is testable.
  static_assert(ts::detail::ArgFits<ts::Ptr<float>, float*>);
  static_assert(ts::detail::ArgFits<ts::Ptr<float>, const std::vector<float>&>);
  static_assert(!ts::detail::ArgFits<ts::Ptr<float>, int*>);
  static_assert(!ts::detail::ArgFits<ts::Ptr<float>, std::vector<double>&>);
  static_assert(!ts::detail::ArgFits<ts::Int, double>);
  static_assert(!ts::detail::ArgFits<ts::Int, float*>);
  static_assert(ts::detail::ArgFits<ts::Float, int>);
}

TEST_CASE("a traced signature runs on the interpreter", "[dsl][host][interp]") {
  auto k = make_sig();
  std::vector<float> x(1);
  std::vector<ts::half> h{ts::half(1.5f)};
  run(k, {}, {1, 1, 1}, x, h, 3, 0.25f, std::int64_t{100});
  CHECK(x[0] == 0.25f + 103.f + 1.5f);
}

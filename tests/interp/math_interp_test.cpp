// The math ops on the interpreter: host libm in the element type (f32 libm for f32, f16 and bf16
// rounded back once; f64 libm for f64), bit for bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "elementwise_util.hpp"

using namespace tessera;
using namespace tessera::test;

namespace {

template <class T>
bool same(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0 || (std::isnan(a) && std::isnan(b));
}

template <class T>
T reference(OpKind k, T x) {
  switch (k) {
    case OpKind::Exp2: return std::exp2(x);
    case OpKind::Log2: return std::log2(x);
    case OpKind::Rsqrt: return T(1) / std::sqrt(x);
    case OpKind::Sin: return std::sin(x);
    case OpKind::Cos: return std::cos(x);
    case OpKind::Tanh: return std::tanh(x);
    case OpKind::Sigmoid: return T(1) / (T(1) + std::exp(-x));
    case OpKind::Erf: return std::erf(x);
    case OpKind::Floor: return std::floor(x);
    default: return std::ceil(x);
  }
}

const OpKind kUnary[] = {OpKind::Exp2, OpKind::Log2, OpKind::Rsqrt, OpKind::Sin, OpKind::Cos,
                         OpKind::Tanh, OpKind::Sigmoid, OpKind::Erf, OpKind::Floor, OpKind::Ceil};

}  // namespace

TEMPLATE_TEST_CASE("math unary ops match host libm in the element type", "[interp][math]", float, double) {
  const DType d = std::is_same_v<TestType, float> ? DType::F32 : DType::F64;
  INFO("seed " << kSeed);
  std::mt19937 rng(kSeed);
  std::uniform_real_distribution<double> dist(-20, 20);
  std::vector<TestType> x(300);
  for (auto& v : x) v = static_cast<TestType>(dist(rng));
  const TestType inf = std::numeric_limits<TestType>::infinity();
  for (TestType s : {TestType(0), TestType(-0.0), TestType(0.5), TestType(-2.5), inf, -inf,
                     std::numeric_limits<TestType>::quiet_NaN()})
    x.push_back(s);
  for (OpKind k : kUnary) {
    const auto out = run_unary<TestType>(k, d, x, d);
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO(ir::op_info(k).name << "(" << x[i] << ")");
      CHECK(same(out[i], reference(k, x[i])));
    }
  }
}

TEST_CASE("math unary ops on f16 compute in f32 and round once", "[interp][math]") {
  std::vector<std::uint16_t> x;
  for (float f : {-3.7f, -1.0f, -0.25f, 0.0f, 0.3f, 1.5f, 2.0f, 7.25f}) x.push_back(ref_f16(f));
  for (OpKind k : kUnary) {
    const auto out = run_unary<std::uint16_t>(k, DType::F16, x, DType::F16);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float xf = static_cast<float>(ref_f16_value(x[i]));
      INFO(ir::op_info(k).name << "(" << xf << ")");
      const float want = reference(k, xf);
      if (std::isnan(want)) CHECK(std::isnan(ref_f16_value(out[i])));
      else CHECK(out[i] == ref_f16(want));
    }
  }
}

TEMPLATE_TEST_CASE("pow matches host libm, special cases included", "[interp][math]", float, double) {
  const DType d = std::is_same_v<TestType, float> ? DType::F32 : DType::F64;
  using V = std::vector<TestType>;
  const TestType inf = std::numeric_limits<TestType>::infinity(), nan = std::numeric_limits<TestType>::quiet_NaN();
  const V a{2, -2, -2, -0.0, 0, 1, -1, 1.5, nan, 0.5, -8};
  const V b{10, 3, 0.5, -3, -1, nan, inf, -2.25, 0, 3.5, 1.0 / 3};
  const V out = run_binary(OpKind::Pow, d, a, b);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("pow(" << a[i] << ", " << b[i] << ")");
    CHECK(same(out[i], std::pow(a[i], b[i])));
  }
}

TEST_CASE("fma rounds once", "[interp][math]") {
  // (1 + 2^-23) * (1 - 2^-23) - 1 = -2^-46 exactly; a multiply then add would give 0.
  const float e = std::ldexp(1.0f, -23);
  std::vector<float> a{1 + e, 2, -3}, b{1 - e, 3, 0.5f}, c{-1, 1, 0.25f}, out(4);
  a.push_back(0); b.push_back(0); c.push_back(0);
  KernelBuilder kb("fma");
  Value* pa = kb.arg(Type::pointer(DType::F32), "a");
  Value* pb = kb.arg(Type::pointer(DType::F32), "b");
  Value* pc = kb.arg(Type::pointer(DType::F32), "c");
  Value* po = kb.arg(Type::pointer(DType::F32), "out");
  Value* r = kb.op(OpKind::Fma, {kb.load(kb.contiguous(pa, 4)), kb.load(kb.contiguous(pb, 4)), kb.load(kb.contiguous(pc, 4))},
                   tile_of(DType::F32, {4}));
  kb.store(kb.contiguous(po, 4), r);
  kb.ret();
  std::vector<ArgValue> args{buffer_arg(a, DType::F32), buffer_arg(b, DType::F32), buffer_arg(c, DType::F32),
                             buffer_arg(out, DType::F32)};
  interp::run(*kb.m, {1, 1, 1}, args);
  CHECK(out[0] == -std::ldexp(1.0f, -46));
  CHECK(out[1] == 7.0f);
  CHECK(out[2] == -1.25f);
}

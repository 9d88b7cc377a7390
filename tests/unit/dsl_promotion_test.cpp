// Type promotion decided by the C++ type system, checked statically and on the traced IR; and the
// misuses that must not compile.
#include <cstdint>
#include <type_traits>

#include "dsl_test_util.hpp"

using namespace dsl_test;
using ts::bfloat16;
using ts::half;
using ts::Tile;

namespace {

template <class A, class B>
using sum_t = decltype(std::declval<Tile<A>>() + std::declval<Tile<B>>());
template <class A, class S>
using weak_t = decltype(std::declval<Tile<A>>() * std::declval<S>());

template <class A, class B>
using div_t = decltype(std::declval<Tile<A>>() / std::declval<Tile<B>>());
template <class A, class S>
using weak_div_t = decltype(std::declval<Tile<A>>() / std::declval<S>());
template <class A, class S>
using less_t = decltype(std::declval<Tile<A>>() < std::declval<S>());

// Tile op Tile: Triton 3.6's rules (computation_type_impl).
static_assert(std::is_same_v<sum_t<std::int32_t, std::int64_t>, Tile<std::int64_t>>);
static_assert(std::is_same_v<sum_t<half, float>, Tile<float>>);
static_assert(std::is_same_v<sum_t<half, bfloat16>, Tile<half>>);
static_assert(std::is_same_v<sum_t<bfloat16, bfloat16>, Tile<bfloat16>>);
static_assert(std::is_same_v<sum_t<bfloat16, std::int32_t>, Tile<float>>);
static_assert(std::is_same_v<sum_t<bfloat16, bool>, Tile<float>>);
static_assert(std::is_same_v<sum_t<std::int32_t, half>, Tile<half>>);
static_assert(std::is_same_v<div_t<half, half>, Tile<float>>);
static_assert(std::is_same_v<div_t<bfloat16, bfloat16>, Tile<float>>);
static_assert(std::is_same_v<div_t<half, std::int8_t>, Tile<float>>);
static_assert(std::is_same_v<div_t<std::int32_t, std::int64_t>, Tile<std::int64_t>>);
static_assert(std::is_same_v<sum_t<std::int64_t, std::uint32_t>, Tile<std::int64_t>>);
static_assert(std::is_same_v<sum_t<std::int16_t, std::uint8_t>, Tile<std::int16_t>>);
static_assert(std::is_same_v<sum_t<bool, std::int8_t>, Tile<std::int8_t>>);
static_assert(std::is_same_v<sum_t<std::int32_t, std::uint32_t>, Tile<std::uint32_t>>);
static_assert(std::is_same_v<sum_t<std::uint8_t, std::int32_t>, Tile<std::int32_t>>);
static_assert(std::is_same_v<sum_t<float, double>, Tile<double>>);
// Tile op C++ scalar: the scalar is weak.
static_assert(std::is_same_v<weak_t<std::int8_t, int>, Tile<std::int8_t>>);
static_assert(std::is_same_v<weak_t<std::int64_t, int>, Tile<std::int64_t>>);
static_assert(std::is_same_v<weak_t<half, double>, Tile<half>>);
static_assert(std::is_same_v<weak_t<std::int32_t, double>, Tile<float>>);
static_assert(std::is_same_v<weak_t<bool, int>, Tile<std::int32_t>>);
static_assert(std::is_same_v<decltype(3 - std::declval<Tile<std::int16_t>>()), Tile<std::int16_t>>);
static_assert(std::is_same_v<weak_t<bfloat16, int>, Tile<bfloat16>>);
static_assert(std::is_same_v<weak_div_t<half, int>, Tile<float>>);
static_assert(std::is_same_v<weak_div_t<std::uint32_t, int>, Tile<std::uint32_t>>);  // no signedness error
static_assert(std::is_same_v<weak_t<bool, unsigned>, Tile<std::uint32_t>>);
static_assert(std::is_same_v<weak_t<bool, long>, Tile<std::int64_t>>);
// Comparisons and minimum/maximum: the C++ number is strong; minimum/maximum compute bf16 in f32.
static_assert(std::is_same_v<decltype(ts::minimum(std::declval<Tile<half>>(), 1.0f)), Tile<float>>);
static_assert(std::is_same_v<decltype(ts::maximum(std::declval<Tile<std::uint8_t>>(), 1)), Tile<std::int32_t>>);
static_assert(std::is_same_v<decltype(ts::maximum(std::declval<Tile<bfloat16>>(), std::declval<Tile<bfloat16>>())), Tile<float>>);
static_assert(std::is_same_v<decltype(ts::maximum(std::declval<Tile<half>>(), std::declval<Tile<half>>())), Tile<half>>);
static_assert(std::is_same_v<less_t<std::uint8_t, int>, ts::Mask>);
// Reductions: Triton's result types (standard.py), and dtype= as ts::as<T>.
static_assert(std::is_same_v<decltype(ts::sum(std::declval<Tile<std::uint8_t>>(), 0)), Tile<std::uint32_t>>);
static_assert(std::is_same_v<decltype(ts::sum(std::declval<Tile<bool>>(), 0)), Tile<std::uint32_t>>);
static_assert(std::is_same_v<decltype(ts::sum(std::declval<Tile<std::int8_t>>(), 0)), Tile<std::int32_t>>);
static_assert(std::is_same_v<decltype(ts::sum(std::declval<Tile<half>>(), 0)), Tile<half>>);
static_assert(std::is_same_v<decltype(ts::sum(std::declval<Tile<half>>(), 0, ts::as<float>)), Tile<float>>);
static_assert(std::is_same_v<decltype(ts::max(std::declval<Tile<half>>(), 0)), Tile<float>>);
static_assert(std::is_same_v<decltype(ts::min(std::declval<Tile<std::uint8_t>>(), 0)), Tile<std::int32_t>>);
static_assert(std::is_same_v<decltype(ts::max(std::declval<Tile<std::int64_t>>(), 0)), Tile<std::int64_t>>);
static_assert(std::is_same_v<decltype(ts::cumsum(std::declval<Tile<bfloat16>>(), 0)), Tile<float>>);
static_assert(std::is_same_v<decltype(ts::cumsum(std::declval<Tile<half>>(), 0)), Tile<half>>);
static_assert(std::is_same_v<decltype(ts::cumprod(std::declval<Tile<std::int8_t>>(), 0)), Tile<std::int8_t>>);
// Comparisons and logic give masks; pointer arithmetic keeps the pointer.
static_assert(std::is_same_v<decltype(std::declval<ts::Float>() < 1), ts::Mask>);
static_assert(std::is_same_v<decltype(std::declval<ts::Mask>() && std::declval<ts::Mask>()), ts::Mask>);
static_assert(std::is_same_v<decltype(std::declval<ts::Ptr<half>>() + std::declval<ts::Int64>()), ts::Ptr<half>>);
static_assert(std::is_same_v<decltype(std::declval<ts::Int>() + std::declval<ts::Ptr<half>>()), ts::Ptr<half>>);
static_assert(std::is_same_v<decltype(std::declval<ts::Ptr<float>>() - 4), ts::Ptr<float>>);
static_assert(std::is_same_v<decltype(ts::load(std::declval<ts::Ptr<bfloat16>>())), ts::BFloat16>);
static_assert(std::is_same_v<decltype(ts::where(std::declval<ts::Mask>(), std::declval<ts::Int>(), 1.5)), ts::Float>);

// Operands that are neither tiles nor C++ numbers have no overload at all.
template <class X, class Y>
constexpr bool addable = requires(X x, Y y) { x + y; };
static_assert(!addable<ts::Float, const char*>, "tile + string");
static_assert(!addable<ts::Ptr<float>, float*>, "pointer tile + C++ pointer");
static_assert(!std::is_convertible_v<ts::Float, ts::Int>, "no implicit conversion between tile types");
static_assert(!std::is_convertible_v<ts::Mask, bool>, "a tile is not a C++ bool");

// Misuses of tiles and C++ numbers (pointer + float, pointer * int, comparing pointers, && on
// integers, ! on floats, an integer tile as a mask, if (tile), a capturing kernel) meet a refusal
// whose static_assert says what to write instead. A refusal's body is instantiated wherever it is
// named, even in decltype or a requires-expression, so that its message comes first: they are
// tested by tests/unit/compile_fail/, one file per misuse, each compiled by a ctest entry that
// expects the message.
using P = ts::Ptr<float>;
template <class X, class Y>
using plus_t = decltype(std::declval<X>() + std::declval<Y>());
template <class X, class Y>
using minus_t = decltype(std::declval<X>() - std::declval<Y>());

// What stays valid next to the refusals.
static_assert(std::is_same_v<plus_t<P, ts::Int>, P>);
static_assert(std::is_same_v<plus_t<P, long>, P>);
static_assert(std::is_same_v<plus_t<int, P>, P>);
static_assert(std::is_same_v<minus_t<P, ts::Int64>, P>);
static_assert(std::is_same_v<decltype(std::declval<ts::Mask>() && std::declval<ts::Mask>()), ts::Mask>);
static_assert(std::is_same_v<decltype(!std::declval<ts::Mask>()), ts::Mask>);
static_assert(std::is_same_v<decltype(std::declval<ts::Int>() & std::declval<ts::Mask>()), ts::Int>);
static_assert(std::is_same_v<decltype(~std::declval<ts::Int>()), ts::Int>);

// Other compile errors with a static_assert message (not in compile_fail/ yet):
//   ts::exp(int_tile);                    // "tessera::exp needs a float tile"
//   ts::Tile<long double> t;              // "T must be bool, int8_t, ... or tessera::Pointer<one of these>"
//   ts::kernel("k", [](float* x) {});      // "every parameter of the kernel function must be a tile type"
//   ts::kernel("k", [](auto x) {});        // "the kernel function must have one non-template call operator"
//   acc_f16 += float_tile;                // "`x op= y` would change x's element type"
//   add[opts](x, y);                      // "kernel launched with the wrong number of arguments"
//   add[opts](float_ptr, int_ptr, ...);   // "a launch argument does not fit its kernel parameter"

}  // namespace

TEST_CASE("promoted operations cast their operands in the IR", "[dsl][promotion]") {
  auto k = ts::kernel("promote", [](ts::Ptr<half> a, ts::Ptr<float> b, ts::Ptr<std::int64_t> c, ts::Ptr<float> out,
                                    ts::Ptr<std::int64_t> out_i) {
    auto offs = ts::arange(0, 16);
    auto ha = ts::load(a + offs);
    auto fb = ts::load(b + offs);
    auto ic = ts::load(c + offs);
    ts::store(out + offs, ha + fb);                 // f16 + f32 -> f32
    ts::store(out_i + offs, offs + ic);             // i32 + i64 -> i64
    ts::store(out + offs, (offs * 0.5).to<float>());  // i32 * double -> f32
  });
  auto m = trace(k);
  INFO(ir::print(*m));
  std::vector<std::string> casts;
  ir::walk(m->entry(), [&](ir::Op& op) {
    if (op.kind == ir::OpKind::Cast) casts.push_back(type_of(op.operands[0]) + "->" + type_of(op.result()));
  });
  std::sort(casts.begin(), casts.end());
  CHECK(casts == std::vector<std::string>{"<16xf16>-><16xf32>", "<16xi32>-><16xf32>", "<16xi32>-><16xi64>"});
  ir::Op* mul = first_op(m->entry(), ir::OpKind::Mul);
  CHECK(type_of(mul->result()) == "<16xf32>");
  CHECK(mul->operands[1]->def->kind == ir::OpKind::Constant);
  CHECK(mul->operands[1]->def->float_attr("value") == 0.5);

  std::vector<half> ha(16);
  std::vector<float> fb(16), out(16);
  std::vector<std::int64_t> ic(16), out_i(16);
  for (int i = 0; i < 16; ++i) ha[i] = half(0.25f * i), fb[i] = 100.f + i, ic[i] = (std::int64_t{1} << 40) + i;
  run(k, {}, {1, 1, 1}, ha, fb, ic, out, out_i);
  for (int i = 0; i < 16; ++i) {
    CHECK(out[i] == 0.5f * i);
    CHECK(out_i[i] == (std::int64_t{1} << 40) + 2 * i);
  }
}

TEST_CASE("a C++ integer keeps a narrow tile's type", "[dsl][promotion]") {
  auto k = ts::kernel("narrow", [](ts::Ptr<std::uint8_t> p) {
    auto offs = ts::arange(0, 8);
    auto v = ts::load(p + offs);
    ts::store(p + offs, (v + 250) >> 1);
  });
  auto m = trace(k);
  ir::Op* add = first_op(m->entry(), ir::OpKind::Add);
  CHECK(type_of(add->result()) == "<8xu8>");
  std::vector<std::uint8_t> p{0, 1, 2, 3, 4, 5, 6, 10};
  run(k, {}, {1, 1, 1}, p);
  CHECK(p[0] == 125);
  CHECK(p[7] == 2);  // (10 + 250) wraps to 4 in u8, >> 1
}

// The DSL's free functions, in Triton's vocabulary. Every function that creates an op takes a
// defaulted std::source_location, so that errors and the IR name the user's line.
#pragma once
#include <concepts>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/element.hpp"
#include "tessera/shape_ops.hpp"
#include "tessera/tile.hpp"

namespace tessera {

// The program's index along grid axis 0, 1 or 2 (a scalar i32).
inline Int program_id(int axis, const Loc& loc = Loc::current()) {
  return Int(detail::emit_program_id(axis, false, loc), loc);
}
// The number of programs along grid axis 0, 1 or 2 (a scalar i32).
inline Int num_programs(int axis, const Loc& loc = Loc::current()) {
  return Int(detail::emit_program_id(axis, true, loc), loc);
}
// [start, end) as a 1-D i32 tile; end - start must be a positive power of two.
inline Int arange(std::int64_t start, std::int64_t end, const Loc& loc = Loc::current()) {
  return Int(detail::emit_arange(start, end, loc), loc);
}

// A tile of `shape` (empty: a scalar) whose elements all equal `value`.
template <Element T, CppScalar V>
Tile<T> full(const Shape& shape, V value, const Loc& loc = Loc::current()) {
  return Tile<T>(detail::emit_full(shape, dtype_of<T>, detail::scalar_value(value), loc), loc);
}
template <Element T>
Tile<T> zeros(const Shape& shape, const Loc& loc = Loc::current()) {
  return full<T>(shape, 0, loc);
}

// The value of compile-time meta-parameter `name` of the launch being traced (a plain C++ value).
TESSERA_API std::int64_t meta(std::string_view name, const Loc& loc = Loc::current());

// ceil(a / b): a host helper usable in constant expressions (grids), and on tiles.
template <std::integral A, std::integral B>
constexpr std::common_type_t<A, B> cdiv(A a, B b) {
  return (a + b - 1) / b;
}
template <class X, class Y>
  requires(detail::is_tile<X> || detail::is_tile<Y>) && IntegerOperands<X, Y>
auto cdiv(const X& a, const Y& b, const Loc& loc = Loc::current()) {
  using C = detail::common_t<X, Y>;
  auto sum = detail::binary<C, C>(detail::BinOp::Add, a, b, loc);
  auto num = detail::binary<C, C>(detail::BinOp::Sub, sum, 1, loc);
  return detail::binary<C, C>(detail::BinOp::Div, num, b, loc);
}

// Elementwise minimum / maximum in the promoted type, as Triton's: a C++ number at its own type
// (i32, f32, ...), bf16 in f32 (floats as fmin/fmax).
template <class X, class Y>
  requires(detail::is_tile<X> || detail::is_tile<Y>) && NumericOperands<X, Y>
auto minimum(const X& a, const Y& b, const Loc& loc = Loc::current()) {
  using C = detail::min_max_t<X, Y>;
  return detail::binary<C, C>(detail::BinOp::Min, a, b, loc);
}
template <class X, class Y>
  requires(detail::is_tile<X> || detail::is_tile<Y>) && NumericOperands<X, Y>
auto maximum(const X& a, const Y& b, const Loc& loc = Loc::current()) {
  using C = detail::min_max_t<X, Y>;
  return detail::binary<C, C>(detail::BinOp::Max, a, b, loc);
}

// How minimum, maximum and clamp treat NaN operands, as Triton's tl.PropagateNan: `none` (the
// default) returns the other operand (fmin/fmax), `all` returns NaN if either operand is NaN.
enum class PropagateNan { none, all };

namespace detail {
// max or min of two float tiles (or a tile and a C++ number), NaN if either is NaN.
template <class C, class X, class Y>
Tile<C> nan_propagating(BinOp op, const X& a, const Y& b, const Loc& loc) {
  const Tile<C> ta(operand_value(a, dtype_of<C>, {}, loc), loc), tb(operand_value(b, dtype_of<C>, {}, loc), loc);
  const Tile<C> m = binary<C, C>(op, ta, tb, loc);
  const Tile<bool> a_nan = binary<bool, C>(BinOp::Ne, ta, ta, loc), b_nan = binary<bool, C>(BinOp::Ne, tb, tb, loc);
  return Tile<C>(emit_select(a_nan.ir_value(loc), ta.ir_value(loc),
                             emit_select(b_nan.ir_value(loc), tb.ir_value(loc), m.ir_value(loc), dtype_of<C>, loc),
                             dtype_of<C>, loc),
                 loc);
}
// op (Min or Max) of a and b in C, NaN-propagating or as fmin/fmax per `nan`.
template <class C, class X, class Y>
Tile<C> min_or_max(BinOp op, const X& a, const Y& b, PropagateNan nan, const Loc& loc) {
  return nan == PropagateNan::all ? nan_propagating<C>(op, a, b, loc) : binary<C, C>(op, a, b, loc);
}
}  // namespace detail

template <class X, class Y>
  requires(detail::is_tile<X> || detail::is_tile<Y>) && NumericOperands<X, Y>
auto minimum(const X& a, const Y& b, PropagateNan nan, const Loc& loc = Loc::current()) {
  using C = detail::min_max_t<X, Y>;
  static_assert(FloatElement<C>, "tessera::minimum: propagate_nan applies to float operands only; drop it for integers");
  return detail::min_or_max<C>(detail::BinOp::Min, a, b, nan, loc);
}
template <class X, class Y>
  requires(detail::is_tile<X> || detail::is_tile<Y>) && NumericOperands<X, Y>
auto maximum(const X& a, const Y& b, PropagateNan nan, const Loc& loc = Loc::current()) {
  using C = detail::min_max_t<X, Y>;
  static_assert(FloatElement<C>, "tessera::maximum: propagate_nan applies to float operands only; drop it for integers");
  return detail::min_or_max<C>(detail::BinOp::Max, a, b, nan, loc);
}

// min(max(x, lo), hi) elementwise on a float tile, as Triton's tl.clamp (lo <= hi is not
// checked), in the type minimum/maximum promote the three to; with PropagateNan::all a NaN in x,
// lo or hi gives NaN, else a NaN x gives lo.
template <class T, class L, class H>
  requires NumericOperands<Tile<T>, L> && NumericOperands<Tile<T>, H>
auto clamp(const Tile<T>& x, const L& lo, const H& hi, PropagateNan nan = PropagateNan::none,
           const Loc& loc = Loc::current()) {
  static_assert(FloatElement<T>, "tessera::clamp needs a float tile (as Triton's); for integers use "
                                 "ts::minimum(ts::maximum(x, lo), hi)");
  using C = detail::min_max_t<Tile<detail::min_max_t<Tile<T>, L>>, H>;
  const Tile<C> l(detail::operand_value(lo, dtype_of<C>, {}, loc), loc), h(detail::operand_value(hi, dtype_of<C>, {}, loc), loc);
  return minimum(maximum(x.template to<C>(loc), l, nan, loc), h, nan, loc);
}

// Triton's swizzle2d: program (i, j) of a size_i x size_j grid renumbered so that groups of
// size_g rows are walked column by column (L2 reuse, as the grouped matmul order); returns the
// new (i, j). Integer tiles or C++ integers, computed in the type i and j promote to.
template <class I, class J, class SI, class SJ, class SG>
  requires(detail::is_tile<I> || detail::is_tile<J>) && IntegerOperands<I, J>
auto swizzle2d(const I& i, const J& j, const SI& size_i, const SJ& size_j, const SG& size_g,
               const Loc& loc = Loc::current()) {
  using C = detail::common_t<I, J>;
  auto tile = [&](const auto& v) { return Tile<C>(detail::operand_value(v, dtype_of<C>, {}, loc), loc); };
  auto op = [&](detail::BinOp o, const Tile<C>& a, const Tile<C>& b) { return detail::binary<C, C>(o, a, b, loc); };
  using detail::BinOp;
  const Tile<C> si = tile(size_i), sj = tile(size_j), sg = tile(size_g);
  const Tile<C> ij = op(BinOp::Add, op(BinOp::Mul, tile(i), sj), tile(j));  // the linear index
  const Tile<C> size_gj = op(BinOp::Mul, sg, sj);                            // elements per group
  const Tile<C> off_i = op(BinOp::Mul, op(BinOp::Div, ij, size_gj), sg);     // the group's first row
  const Tile<C> rows = op(BinOp::Min, op(BinOp::Sub, si, off_i), sg);        // the last group may be short
  const Tile<C> in_group = op(BinOp::Rem, ij, size_gj);
  return std::pair<Tile<C>, Tile<C>>{op(BinOp::Add, off_i, op(BinOp::Rem, in_group, rows)), op(BinOp::Div, in_group, rows)};
}

// Float math; abs also on integers.
#define TESSERA_FLOAT_MATH(name, KIND)                                                            \
  template <class T>                                                                           \
  Tile<T> name(const Tile<T>& x, const Loc& loc = Loc::current()) {                            \
    static_assert(FloatElement<T>, "tessera::" #name " needs a float tile; convert with .to<float>()"); \
    return Tile<T>(detail::emit_unary(detail::UnOp::KIND, x.ir_value(loc), loc), loc);         \
  }
TESSERA_FLOAT_MATH(exp, Exp)
TESSERA_FLOAT_MATH(log, Log)
TESSERA_FLOAT_MATH(sqrt, Sqrt)
// f16/bf16 are computed in f32 and rounded back; accuracy per op: README, "Math".
TESSERA_FLOAT_MATH(exp2, Exp2)
TESSERA_FLOAT_MATH(log2, Log2)
TESSERA_FLOAT_MATH(rsqrt, Rsqrt)
TESSERA_FLOAT_MATH(sin, Sin)
TESSERA_FLOAT_MATH(cos, Cos)
TESSERA_FLOAT_MATH(tanh, Tanh)
TESSERA_FLOAT_MATH(sigmoid, Sigmoid)
TESSERA_FLOAT_MATH(erf, Erf)
TESSERA_FLOAT_MATH(floor, Floor)
TESSERA_FLOAT_MATH(ceil, Ceil)
#undef TESSERA_FLOAT_MATH
// sqrt correctly rounded, as Triton's tl.sqrt_rn (f32 or f64): tessera's sqrt already is on every
// target (sqrt.rn on NVIDIA; README, "Math"), so this is sqrt under Triton's name.
template <class T>
Tile<T> sqrt_rn(const Tile<T>& x, const Loc& loc = Loc::current()) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "tessera::sqrt_rn takes f32 or f64 tiles (as Triton's); convert with .to<float>()");
  return sqrt(x, loc);
}

// a / b correctly rounded (IEEE, to nearest even) on every target, as Triton's tl.div_rn: f32 or
// f64 after promotion as for `/`. (`/` on f32 is div.full.f32 on NVIDIA GPUs, within 2 ulp, as
// Triton's; the interpreter and the host targets divide exactly either way.)
template <class X, class Y>
  requires(detail::is_tile<X> || detail::is_tile<Y>) && NumericOperands<X, Y>
auto div_rn(const X& a, const Y& b, const Loc& loc = Loc::current()) {
  using C = detail::div_common_t<X, Y>;
  static_assert(std::is_same_v<C, float> || std::is_same_v<C, double>,
                "tessera::div_rn takes f32 or f64 operands (as Triton's); convert them with .to<float>()");
  return Tile<C>(detail::emit_div_rn(detail::operand_value(a, dtype_of<C>, {}, loc),
                                     detail::operand_value(b, dtype_of<C>, {}, loc), dtype_of<C>, loc),
                 loc);
}

// a / b of float operands, as Triton's tl.fdiv: `/` (div.full.f32 for f32 on NVIDIA), or the
// correctly rounded quotient with ieee_rounding = true. Int operands do not compile: convert them.
template <class X, class Y>
  requires(detail::is_tile<X> || detail::is_tile<Y>) && NumericOperands<X, Y>
auto fdiv(const X& a, const Y& b, bool ieee_rounding = false, const Loc& loc = Loc::current()) {
  static_assert(FloatElement<detail::elem_t<X>> && FloatElement<detail::elem_t<Y>>,
                "tessera::fdiv: both operands must be floats (as Triton's); convert an int tile with .to<float>()");
  using C = detail::div_common_t<X, Y>;
  ir::Value* va = detail::operand_value(a, dtype_of<C>, {}, loc);
  ir::Value* vb = detail::operand_value(b, dtype_of<C>, {}, loc);
  if (ieee_rounding) return Tile<C>(detail::emit_div_rn(va, vb, dtype_of<C>, loc), loc);
  return Tile<C>(detail::emit_binary(detail::BinOp::Div, va, vb, dtype_of<C>, loc), loc);
}

// The fast forms of f32 division and exponential, as CUDA's __fdividef / __expf and Triton's
// libdevice.fast_dividef / fast_expf, for kernels bound by their instructions rather than by
// memory (an erfc polynomial: dsl/torch/pointwise_kernels.hpp). On NVIDIA GPUs:
// - fast_dividef(a, b): div.approx.ftz.f32 (a reciprocal and a product, against div.full.f32's
//   range checks, and without the subnormal scaling ptxas puts around div.approx.f32's: three SASS
//   instructions fewer): within 2 ulp for 2^-126 <= |b| <= 2^126; 0 for larger |b|, NaN for
//   infinite a; subnormal operands count as 0 and subnormal results are 0.
// - fast_expf(x): ex2.approx.ftz.f32 of x·log2(e), `exp` without its subnormal handling: subnormal
//   inputs count as 0 and results below 2^-126 are 0.
// - fast_exp2f(x): ex2.approx.ftz.f32 of x, `exp2` likewise (CUDA's ex2.approx.ftz, what flash
//   attention's softmax uses: exp(s - m) as fast_exp2f(s·log2(e) - m·log2(e)), one fma and the MUFU).
// Elsewhere (the interpreter, host and AMD targets) they are `/`, `exp` and `exp2`; the interpreter
// divides exactly and flushes nothing, which the GPU's results are within the bounds above of.
// f32 operands only (a C++ number converts): convert f16/bf16 tiles with .to<float>().
template <class X, class Y>
  requires(detail::is_tile<X> || detail::is_tile<Y>) && NumericOperands<X, Y>
Tile<float> fast_dividef(const X& a, const Y& b, const Loc& loc = Loc::current()) {
  static_assert(std::is_same_v<detail::div_common_t<X, Y>, float>,
                "tessera::fast_dividef takes f32 operands (as CUDA's __fdividef); convert with .to<float>()");
  return Tile<float>(detail::emit_fast_div(detail::operand_value(a, dtype_of<float>, {}, loc),
                                           detail::operand_value(b, dtype_of<float>, {}, loc), loc),
                     loc);
}
inline Tile<float> fast_expf(const Tile<float>& x, const Loc& loc = Loc::current()) {
  return Tile<float>(detail::emit_fast_exp(x.ir_value(loc), loc), loc);
}
// log2(e), for exp(x) as fast_exp2f(x·kLog2e) (an fma where a max is subtracted: x·kLog2e - m·kLog2e).
inline constexpr float kLog2e = 1.4426950408889634f;
inline Tile<float> fast_exp2f(const Tile<float>& x, const Loc& loc = Loc::current()) {
  return Tile<float>(detail::emit_fast_exp2(x.ir_value(loc), loc), loc);
}

// a ** b elementwise, in the promoted type (as for `+`), which must be a float type.
template <class X, class Y>
  requires(detail::is_tile<X> || detail::is_tile<Y>) && NumericOperands<X, Y>
auto pow(const X& a, const Y& b, const Loc& loc = Loc::current()) {
  using C = detail::common_t<X, Y>;
  static_assert(FloatElement<C>, "tessera::pow needs float operands; convert with .to<float>()");
  ir::Value* va = detail::operand_value(a, dtype_of<C>, {}, loc);
  ir::Value* vb = detail::operand_value(b, dtype_of<C>, {}, loc);
  return Tile<C>(detail::emit_pow(va, vb, dtype_of<C>, loc), loc);
}

// a * b + c rounded once, elementwise, in the promoted type of the three (a float type).
template <class X, class Y, class Z>
  requires(detail::is_tile<X> || detail::is_tile<Y> || detail::is_tile<Z>) && NumericOperands<X, Y> &&
          NumericOperands<X, Z>
auto fma(const X& a, const Y& b, const Z& c, const Loc& loc = Loc::current()) {
  // Tiles promote strongly and C++ numbers weakly, whichever position they take.
  using C = std::conditional_t<(detail::is_tile<X> || detail::is_tile<Y>),
                               detail::common_t<Tile<detail::common_t<X, Y>>, Z>,
                               detail::common_t<Tile<detail::common_t<Z, X>>, Y>>;
  static_assert(FloatElement<C>, "tessera::fma needs float operands; convert with .to<float>()");
  ir::Value* va = detail::operand_value(a, dtype_of<C>, {}, loc);
  ir::Value* vb = detail::operand_value(b, dtype_of<C>, {}, loc);
  ir::Value* vc = detail::operand_value(c, dtype_of<C>, {}, loc);
  return Tile<C>(detail::emit_fma(va, vb, vc, dtype_of<C>, loc), loc);
}
// The accumulator type of a dot of T operands: float for fp8, half, bfloat16 and float, int32_t for int8_t.
template <class T>
using dot_accumulator_t = std::conditional_t<std::is_same_v<T, std::int8_t>, std::int32_t, float>;

// How a dot of float operands uses the tensor cores, as Triton's input_precision: tf32 (the
// default, as Triton's: both operands read as tf32, their mantissas truncated to 10 bits, then
// multiplied exactly and summed in f32), tf32x3 (each operand as a tf32 high part plus a tf32 remainder, three
// tensor-core products: close to f32 accuracy at a third of tf32's speed), ieee (full f32
// products on the FMA units; no tensor cores).
enum class InputPrecision { tf32, tf32x3, ieee };

// Matrix product of an M x K and a K x N tile plus an M x N accumulator, as Triton's tl.dot: half
// or bfloat16 (float accumulator; tensor cores on NVIDIA GPUs), float (float accumulator; tf32
// tensor cores unless an InputPrecision says otherwise), int8_t (int32_t accumulator, wrapping),
// float8_e4m3 or float8_e5m2 (float accumulator; exact products: today through f16 tensor-core
// operands, which hold every fp8 value, not yet sm_90's fp8 wgmma).
// M, N, K >= 16, powers of two as every tile dim.
template <class T>
inline constexpr bool dot_operand =
    std::is_same_v<T, half> || std::is_same_v<T, bfloat16> || std::is_same_v<T, float> ||
    std::is_same_v<T, std::int8_t> || std::is_same_v<T, float8_e4m3> || std::is_same_v<T, float8_e5m2>;

template <class T>
Tile<dot_accumulator_t<T>> dot(const Tile<T>& a, const Tile<T>& b, const Tile<dot_accumulator_t<T>>& acc,
                               const Loc& loc = Loc::current()) {
  static_assert(dot_operand<T>,
                "tessera::dot takes half, bfloat16, float, int8_t, float8_e4m3 or float8_e5m2 tiles; convert with "
                ".to<half>() first");
  return Tile<dot_accumulator_t<T>>(detail::emit_dot(a.ir_value(loc), b.ir_value(loc), acc.ir_value(loc), -1, loc), loc);
}
// The same with a zero accumulator.
template <class T>
Tile<dot_accumulator_t<T>> dot(const Tile<T>& a, const Tile<T>& b, const Loc& loc = Loc::current()) {
  static_assert(dot_operand<T>,
                "tessera::dot takes half, bfloat16, float, int8_t, float8_e4m3 or float8_e5m2 tiles; convert with "
                ".to<half>() first");
  return Tile<dot_accumulator_t<T>>(detail::emit_dot(a.ir_value(loc), b.ir_value(loc), nullptr, -1, loc), loc);
}
// A dot of float tiles with its input precision.
template <class T>
Tile<float> dot(const Tile<T>& a, const Tile<T>& b, const Tile<float>& acc, InputPrecision precision,
                const Loc& loc = Loc::current()) {
  static_assert(std::is_same_v<T, float>, "tessera::dot's InputPrecision applies to float tiles only");
  return Tile<float>(detail::emit_dot(a.ir_value(loc), b.ir_value(loc), acc.ir_value(loc), static_cast<int>(precision), loc), loc);
}
template <class T>
Tile<float> dot(const Tile<T>& a, const Tile<T>& b, InputPrecision precision, const Loc& loc = Loc::current()) {
  static_assert(std::is_same_v<T, float>, "tessera::dot's InputPrecision applies to float tiles only");
  return Tile<float>(detail::emit_dot(a.ir_value(loc), b.ir_value(loc), nullptr, static_cast<int>(precision), loc), loc);
}

template <class T>
Tile<T> abs(const Tile<T>& x, const Loc& loc = Loc::current()) {
  static_assert(Numeric<T>, "tessera::abs needs a numeric tile");
  return Tile<T>(detail::emit_unary(detail::UnOp::Abs, x.ir_value(loc), loc), loc);
}

namespace detail {
template <class X>
inline constexpr bool is_pointer_tile = false;
template <class T>
inline constexpr bool is_pointer_tile<Tile<Pointer<T>>> = true;
}  // namespace detail

// mask ? a : b elementwise, all three broadcast together; a and b promote as for `+`.
template <class M, class X, class Y>
auto where(const Tile<M>& mask, const X& a, const Y& b, const Loc& loc = Loc::current()) {
  static_assert(std::is_same_v<M, bool>, "tessera::where: the condition must be a mask (Tile<bool>); compare it, e.g. x != 0");
  static_assert(!detail::is_pointer_tile<X> && !detail::is_pointer_tile<Y>,
                "tessera::where on pointers: both must be pointers to the same element type (Ptr<T> and Ptr<T>); "
                "a pointer and a number do not mix");
  static_assert(NumericOperands<X, Y>, "tessera::where: both values must be numeric tiles or C++ numbers");
  using C = detail::common_t<X, Y>;
  ir::Value* m = mask.ir_value(loc);
  ir::Value* va = detail::operand_value(a, dtype_of<C>, {}, loc);
  ir::Value* vb = detail::operand_value(b, dtype_of<C>, {}, loc);
  return Tile<C>(detail::emit_select(m, va, vb, dtype_of<C>, loc), loc);
}

// mask ? a : b on pointers (Triton's tl.where on pointer tiles): each element points where its
// mask says, into either tensor; all three broadcast together. No pointer arithmetic happens, so
// both must point to the same element type.
template <class M, class T>
Ptr<T> where(const Tile<M>& mask, const Ptr<T>& a, const Ptr<T>& b, const Loc& loc = Loc::current()) {
  static_assert(std::is_same_v<M, bool>, "tessera::where: the condition must be a mask (Tile<bool>); compare it, e.g. x != 0");
  return Ptr<T>(detail::emit_select_pointer(mask.ir_value(loc), a.ir_value(loc), b.ir_value(loc), loc), loc);
}

// The same bits read as another type (Triton's `x.to(dtype, bitcast=True)`): a number tile to a
// number type of its width (float <-> int32_t/uint32_t, half <-> bfloat16/int16_t, double <->
// int64_t), or a pointer tile to a pointer of another element type (the addresses unchanged):
//   ts::Tile<std::uint32_t> bits = ts::bitcast<std::uint32_t>(x);          // x: Tile<float>
//   ts::Ptr<std::int32_t> words = ts::bitcast<ts::Pointer<std::int32_t>>(p);  // p: Ptr<float>
template <class U, class T>
Tile<U> bitcast(const Tile<T>& x, const Loc& loc = Loc::current()) {
  static_assert(TileElement<U>, "tessera::bitcast<U>: U must be a tile element type (a number type or ts::Pointer<T>)");
  static_assert(PointerElement<T> == PointerElement<U>,
                "tessera::bitcast: a pointer bitcasts only to another pointer (ts::Pointer<T>), a number only to a number");
  if constexpr (!PointerElement<T>) {
    static_assert(!std::is_same_v<T, bool> && !std::is_same_v<U, bool>,
                  "tessera::bitcast of bool: a mask has no bit width to reinterpret; use .to<U>()");
    static_assert(sizeof(T) == sizeof(U), "tessera::bitcast: the two element types must have the same width");
  }
  return Tile<U>(detail::emit_bitcast(x.ir_value(loc), dtype_of<U>, ElementTraits<U>::pointee, loc), loc);
}

// Promises about a tile of integers or pointers that the compiler cannot prove (Triton's
// tl.multiple_of and tl.max_contiguous), one value per dim (one for a scalar or a 1-D tile):
// - max_contiguous(x, c): along each dim, every aligned group of c elements counts up by one
//   (a pointer: by one element); c a power of two dividing the dim.
// - multiple_of(x, d): the first element of each such run is a multiple of d (a pointer: its
//   address in bytes). The runs are those of max_contiguous when x has one, else those the
//   compiler proves (pid * 16 + arange(0, 16) is one run of 16), as in Triton.
// They let the compiler use wider vectors and share masks between lanes, as in Triton's matmul:
//   auto rows = ts::max_contiguous(ts::multiple_of((pid_m * BM + ts::arange(0, BM)) % M, BM), BM);
// Nested, they are one promise (the outer wins where both speak). The interpreter checks each
// promise and a broken one is a tessera::ProgramError naming the line; compiled code trusts it.
template <class T>
Tile<T> multiple_of(const Tile<T>& x, std::vector<std::int64_t> per_dim, const Loc& loc = Loc::current()) {
  static_assert(IntegerElement<T> || PointerElement<T>, "tessera::multiple_of applies to integer and pointer tiles");
  return Tile<T>(detail::emit_assume(x.ir_value(loc), {}, per_dim, loc), loc);
}
template <class T>
Tile<T> multiple_of(const Tile<T>& x, std::int64_t d, const Loc& loc = Loc::current()) {
  return multiple_of(x, std::vector<std::int64_t>{d}, loc);
}
template <class T>
Tile<T> max_contiguous(const Tile<T>& x, std::vector<std::int64_t> per_dim, const Loc& loc = Loc::current()) {
  static_assert(IntegerElement<T> || PointerElement<T>, "tessera::max_contiguous applies to integer and pointer tiles");
  return Tile<T>(detail::emit_assume(x.ir_value(loc), per_dim, {}, loc), loc);
}
template <class T>
Tile<T> max_contiguous(const Tile<T>& x, std::int64_t c, const Loc& loc = Loc::current()) {
  return max_contiguous(x, std::vector<std::int64_t>{c}, loc);
}

namespace detail {
// `other` of a load or the value of a store, converted to the pointee type T as Triton casts
// them: a tile of another element type through a cast, a C++ number as a cast would convert it.
template <class T, class X>
ir::Value* converted_to_pointee(const X& x, const Loc& loc) {
  static_assert(CppScalar<X> || (is_tile<X> && Element<elem_t<X>>), "tessera::load/store: `other` and a stored "
                                                                    "value must be C++ numbers or tiles of numbers");
  if constexpr (is_tile<X>) return emit_cast(x.ir_value(loc), dtype_of<T>, loc);
  else return emit_converted_constant(dtype_of<T>, scalar_value(x), loc);
}
}  // namespace detail

// Cache and eviction hints of a load or a store (Triton's cache_modifier and eviction_policy):
// they never change a value. On NVIDIA they become the PTX qualifiers of the same names
// (ld.global.cg, st.global.cs, .L1::evict_first); other targets ignore them, as do dot operands
// that the pipeline turns into cp.async copies. PTX takes a cache modifier or an eviction
// policy, not both: giving both is an error naming the line.
//   auto x = ts::load(p + offs, mask, 0.f, {.cache = ts::LoadCache::cg});
//   ts::store(q + offs, y, mask, {.eviction = ts::Eviction::first});
enum class LoadCache { none, ca, cg, cv };
enum class StoreCache { none, wb, cg, cs, wt };
enum class Eviction { none, first, last };
struct LoadHints {
  LoadCache cache = LoadCache::none;
  Eviction eviction = Eviction::none;
};
struct StoreHints {
  StoreCache cache = StoreCache::none;
  Eviction eviction = Eviction::none;
};

namespace detail {
// The IR's spelling of the hints (ops.def `load`/`store`; "" for none).
constexpr const char* hint_name(LoadCache c) {
  constexpr const char* names[] = {"", "ca", "cg", "cv"};
  return names[static_cast<int>(c)];
}
constexpr const char* hint_name(StoreCache c) {
  constexpr const char* names[] = {"", "wb", "cg", "cs", "wt"};
  return names[static_cast<int>(c)];
}
constexpr const char* hint_name(Eviction e) {
  constexpr const char* names[] = {"", "evict_first", "evict_last"};
  return names[static_cast<int>(e)];
}
inline AccessHintNames names_of(const LoadHints& h) { return {hint_name(h.cache), hint_name(h.eviction)}; }
inline AccessHintNames names_of(const StoreHints& h) { return {hint_name(h.cache), hint_name(h.eviction)}; }

enum class Access { Load, Store };
template <Access A, class M>
ir::Value* mask_value(const Tile<M>& mask, const Loc& loc) {
  if constexpr (A == Access::Load)
    static_assert(std::is_same_v<M, bool>,
                  "tessera::load: the mask must be a Tile<bool>; compare to make one, e.g. offs < n or x != 0");
  else
    static_assert(std::is_same_v<M, bool>,
                  "tessera::store: the mask must be a Tile<bool>; compare to make one, e.g. offs < n or x != 0");
  return mask.ir_value(loc);
}
}  // namespace detail

// Loads the elements `ptr` points to; masked-off lanes are not accessed and give `other` (0),
// converted to the pointee type as Triton does (a tile of another type is cast; -1 for a uint8_t
// load is 255). The mask is a Tile<bool> (a template here only so that another tile gets a clear
// message). Through a scalar pointer the mask and `other` must be scalars too (as in Triton).
// Each form takes LoadHints last (before the source location).
template <class T>
Tile<T> load(const Ptr<T>& ptr, const LoadHints& hints, const Loc& loc = Loc::current()) {
  return Tile<T>(detail::emit_load(ptr.ir_value(loc), nullptr, nullptr, detail::names_of(hints), loc), loc);
}
template <class T>
Tile<T> load(const Ptr<T>& ptr, const Loc& loc = Loc::current()) {
  return load(ptr, LoadHints{}, loc);
}
template <class T, class M>
Tile<T> load(const Ptr<T>& ptr, const Tile<M>& mask, const LoadHints& hints, const Loc& loc = Loc::current()) {
  return Tile<T>(detail::emit_load(ptr.ir_value(loc), detail::mask_value<detail::Access::Load>(mask, loc), nullptr,
                                   detail::names_of(hints), loc),
                 loc);
}
template <class T, class M>
Tile<T> load(const Ptr<T>& ptr, const Tile<M>& mask, const Loc& loc = Loc::current()) {
  return load(ptr, mask, LoadHints{}, loc);
}
template <class T, class M, class O>
Tile<T> load(const Ptr<T>& ptr, const Tile<M>& mask, const O& other, const LoadHints& hints,
             const Loc& loc = Loc::current()) {
  ir::Value* m = detail::mask_value<detail::Access::Load>(mask, loc);
  ir::Value* o = detail::converted_to_pointee<T>(other, loc);
  return Tile<T>(detail::emit_load(ptr.ir_value(loc), m, o, detail::names_of(hints), loc), loc);
}
template <class T, class M, class O>
Tile<T> load(const Ptr<T>& ptr, const Tile<M>& mask, const O& other, const Loc& loc = Loc::current()) {
  return load(ptr, mask, other, LoadHints{}, loc);
}

// Stores `value` (broadcast to the pointer's shape, converted to the pointee type as Triton does:
// a float tile stored through a Ptr<half> is rounded to half) where `mask` (a Tile<bool>) holds.
// Through a scalar pointer the value and the mask must be scalars: every lane would write the one
// address. Each form takes StoreHints last (before the source location).
template <class T, class V>
void store(const Ptr<T>& ptr, const V& value, const StoreHints& hints, const Loc& loc = Loc::current()) {
  detail::emit_store(ptr.ir_value(loc), detail::converted_to_pointee<T>(value, loc), nullptr, detail::names_of(hints), loc);
}
template <class T, class V>
void store(const Ptr<T>& ptr, const V& value, const Loc& loc = Loc::current()) {
  store(ptr, value, StoreHints{}, loc);
}
template <class T, class V, class M>
void store(const Ptr<T>& ptr, const V& value, const Tile<M>& mask, const StoreHints& hints,
           const Loc& loc = Loc::current()) {
  ir::Value* m = detail::mask_value<detail::Access::Store>(mask, loc);
  detail::emit_store(ptr.ir_value(loc), detail::converted_to_pointee<T>(value, loc), m, detail::names_of(hints), loc);
}
template <class T, class V, class M>
void store(const Ptr<T>& ptr, const V& value, const Tile<M>& mask, const Loc& loc = Loc::current()) {
  store(ptr, value, mask, StoreHints{}, loc);
}

}  // namespace tessera

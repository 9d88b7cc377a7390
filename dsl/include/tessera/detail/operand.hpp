// What an operand of a DSL operation may be (a Tile or a C++ scalar), and the element type an
// operation on two operands computes in. Declarations only; tile.hpp holds the definitions.
#pragma once
#include <concepts>
#include <type_traits>

#include "tessera/detail/core.hpp"
#include "tessera/element.hpp"

namespace tessera {

template <class T>
class Tile;

namespace detail {

template <class X>
struct IsTile : std::false_type {};
template <class T>
struct IsTile<Tile<T>> : std::true_type {};
template <class X>
inline constexpr bool is_tile = IsTile<std::remove_cvref_t<X>>::value;

// The element type a C++ scalar stands for when nothing else decides (element.hpp, scalar_dtype).
template <class S>
using scalar_element_t = typename TypeOf<scalar_dtype<S>()>::type;

template <class X>
struct OperandTraits {};  // neither a Tile nor a C++ scalar: no `elem`, constraints fail
template <class T>
struct OperandTraits<Tile<T>> {
  using elem = T;
  static constexpr bool weak = false;
};
template <CppScalar S>
struct OperandTraits<S> {
  using elem = scalar_element_t<S>;
  static constexpr bool weak = true;
};

template <class X>
using elem_t = typename OperandTraits<std::remove_cvref_t<X>>::elem;

template <class X>
concept Operand = requires { typename elem_t<X>; };

// The result type of a refusal: an overload that exists only to stop a misuse (pointer + float,
// ptr * 2, ...) with a static_assert saying what to write instead (detail/operators.hpp).
struct Refused {};

// false, but only once T is known: a static_assert on it fires when its template is instantiated.
template <class...>
inline constexpr bool always_false = false;

// The element type an operation on numeric operands X and Y computes in (DivOrMod: `/` or `%`);
// no `type` (a soft substitution failure) when either is not numeric.
template <class X, class Y, bool DivOrMod>
struct CommonElement {};
// fp8 with an integer: Triton's TypeError ("unexpected type"), stopped where the pair is typed
// (a static_assert in the class body fires when the operator's type is formed).
#define TESSERA_FP8_WITH_INT_MESSAGE                                                                   \
  "tessera: an fp8 tile (float8_e4m3 / float8_e5m2) does not combine with an integer (as Triton's " \
  "TypeError): convert one of them first, e.g. x.to<half>() or i.to<float8_e4m3>()"
template <Element T, Element U, bool DivOrMod>
struct CommonElement<Tile<T>, Tile<U>, DivOrMod> {
  static_assert(!mixes_fp8_with_int(dtype_of<T>, dtype_of<U>), TESSERA_FP8_WITH_INT_MESSAGE);
  using type = promote_t<T, U, DivOrMod>;
};
template <Element T, CppScalar S, bool DivOrMod>
struct CommonElement<Tile<T>, S, DivOrMod> {
  using type = promote_weak_t<T, S, DivOrMod>;
};
template <CppScalar S, Element T, bool DivOrMod>
struct CommonElement<S, Tile<T>, DivOrMod> {
  using type = promote_weak_t<T, S, DivOrMod>;
};
template <CppScalar S, CppScalar R, bool DivOrMod>
struct CommonElement<S, R, DivOrMod> {
  using type = promote_t<scalar_element_t<S>, scalar_element_t<R>, DivOrMod>;
};
template <class X, class Y>
using common_t = typename CommonElement<std::remove_cvref_t<X>, std::remove_cvref_t<Y>, false>::type;
// The type `/` and `%` compute in: as common_t, but f16/bf16 compute in f32 (Triton's rule).
template <class X, class Y>
using div_common_t = typename CommonElement<std::remove_cvref_t<X>, std::remove_cvref_t<Y>, true>::type;

// The type comparisons compute in: as common_t, but a C++ scalar keeps its own type (i32, f32, ...)
// and promotes with the tile's (Triton's strong literal in comparisons).
template <class X, class Y>
struct StrongCommon : CommonElement<X, Y, false> {};
template <Element T, CppScalar S>
struct StrongCommon<Tile<T>, S> {
  static_assert(!mixes_fp8_with_int(dtype_of<T>, scalar_dtype<S>()), TESSERA_FP8_WITH_INT_MESSAGE);
  using type = typename TypeOf<promote_strong<T, S>()>::type;
};
template <CppScalar S, Element T>
struct StrongCommon<S, Tile<T>> {
  static_assert(!mixes_fp8_with_int(dtype_of<T>, scalar_dtype<S>()), TESSERA_FP8_WITH_INT_MESSAGE);
  using type = typename TypeOf<promote_strong<T, S>()>::type;
};
template <class X, class Y>
using strong_common_t = typename StrongCommon<std::remove_cvref_t<X>, std::remove_cvref_t<Y>>::type;
// minimum / maximum / clamp: strong, with bf16 computed in f32 (Triton's _promote_bfloat16_to_float32).
template <class X, class Y>
using min_max_t = std::conditional_t<std::is_same_v<strong_common_t<X, Y>, bfloat16>, float, strong_common_t<X, Y>>;

// Triton refuses `/` and `%` of two integers of different signedness where both decide the type
// (a weak C++ integer takes the tile's signedness).
template <class X, class Y>
inline constexpr bool mixed_signedness_division = [] {
  if constexpr (!requires { typename div_common_t<X, Y>; }) return false;
  else {
    using A = elem_t<X>;
    using B = elem_t<Y>;
    constexpr bool weak = !is_tile<X> || !is_tile<Y>;
    if constexpr (weak || !IntegerOrBool<A> || !IntegerOrBool<B>) return false;
    else return promotes_unsigned(dtype_of<A>) != promotes_unsigned(dtype_of<B>);
  }
}();

// A Tile operand of an operator together with where the operator was written: the location is
// captured by this implicit conversion, since operators cannot take a defaulted third parameter.
// `Hook` makes Tile<T> an associated class, so that argument-dependent lookup on an At finds the
// operators (hidden friends of Tile<T>'s base) when one operator is written in terms of another.
template <class T, class Hook = Tile<T>>
struct At {
  const Tile<T>& tile;
  Loc loc;
  At(const Tile<T>& t, Loc l = Loc::current()) : tile(t), loc(l) {}
};
template <class T, class Hook = Tile<T>>
struct AtMut {
  Tile<T>& tile;
  Loc loc;
  AtMut(Tile<T>& t, Loc l = Loc::current()) : tile(t), loc(l) {}
};

// The IR value of an operand converted to `d`; a scalar becomes a constant of type `d` with shape `shape`.
template <class X>
ir::Value* operand_value(const X& x, DType d, const Shape& shape, const Loc& loc);

// x op y computing in element type C, giving a Tile<R> (R = C, or bool for comparisons).
template <class R, class C, class X, class Y>
Tile<R> binary(BinOp op, const X& x, const Y& y, const Loc& loc);

// Pointer arithmetic: p + offset, or p - offset.
template <class P, class X>
Tile<P> add_pointer(const Tile<P>& p, const X& offset, bool subtract, const Loc& loc);

}  // namespace detail

// Operand-level requirements, named after what they require (compiler notes print the name).
template <class X, class Y>
concept NumericOperands = detail::Operand<X> && detail::Operand<Y> && Numeric<detail::elem_t<X>> &&
                          Numeric<detail::elem_t<Y>>;
template <class X, class Y>
concept IntegerOperands = detail::Operand<X> && detail::Operand<Y> &&
                          IntegerOrBool<detail::elem_t<X>> && IntegerOrBool<detail::elem_t<Y>>;
template <class X, class Y>
concept ShiftOperands = detail::Operand<X> && detail::Operand<Y> && IntegerElement<detail::elem_t<X>> &&
                        IntegerElement<detail::elem_t<Y>>;
template <class X, class Y>
concept MaskOperands = detail::Operand<X> && detail::Operand<Y> && std::same_as<detail::elem_t<X>, bool> &&
                       std::same_as<detail::elem_t<Y>, bool>;
// A pointer tile plus an integer offset (tile or C++ integer); never a float or another pointer.
template <class P, class I>
concept PointerPlusInteger = detail::is_tile<P> && detail::Operand<I> && PointerOffset<detail::elem_t<P>, detail::elem_t<I>> &&
                             !std::same_as<std::remove_cvref_t<I>, bool>;

// The misuses that operators.hpp refuses with a message, each the exact complement of what the
// valid overloads accept for tiles and C++ numbers (so a refusal never competes with them).
template <class X>
concept PointerOperand = detail::Operand<X> && PointerElement<detail::elem_t<X>>;
template <class X, class Y>
concept PointerInvolved = detail::Operand<X> && detail::Operand<Y> && (PointerOperand<X> || PointerOperand<Y>);
// x + y with a pointer that is not pointer + integer or integer + pointer.
template <class X, class Y>
concept PointerSumMisuse = PointerInvolved<X, Y> && !PointerPlusInteger<X, Y> && !PointerPlusInteger<Y, X>;
// x - y with a pointer that is not pointer - integer.
template <class X, class Y>
concept PointerDifferenceMisuse = PointerInvolved<X, Y> && !PointerPlusInteger<X, Y>;
// Bitwise ops or shifts on numbers where one is not an integer (a float; a mask for shifts).
template <class X, class Y>
concept BitwiseOnNonIntegers = NumericOperands<X, Y> && !IntegerOperands<X, Y>;
template <class X, class Y>
concept ShiftOfNonIntegers = NumericOperands<X, Y> && !ShiftOperands<X, Y>;
// && or || where the operands are not two masks.
template <class X, class Y>
concept LogicOnNonMasks = detail::Operand<X> && detail::Operand<Y> &&
                          !(detail::is_tile<X> && detail::is_tile<Y> && MaskOperands<X, Y>);

}  // namespace tessera

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

// The element type a C++ scalar stands for when nothing else decides (Triton: int -> i32).
template <class S>
using scalar_element_t = std::conditional_t<
    std::is_same_v<S, bool>, bool,
    std::conditional_t<std::is_floating_point_v<S>, float,
                       std::conditional_t<sizeof(S) == 8, std::int64_t, std::int32_t>>>;

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

// The element type an operation on numeric operands X and Y computes in; no `type` (a soft
// substitution failure) when either is not numeric.
template <class X, class Y>
struct CommonElement {};
template <Element T, Element U>
struct CommonElement<Tile<T>, Tile<U>> {
  using type = promote_t<T, U>;
};
template <Element T, CppScalar S>
struct CommonElement<Tile<T>, S> {
  using type = promote_weak_t<T, S>;
};
template <CppScalar S, Element T>
struct CommonElement<S, Tile<T>> {
  using type = promote_weak_t<T, S>;
};
template <CppScalar S, CppScalar R>
struct CommonElement<S, R> {
  using type = promote_t<scalar_element_t<S>, scalar_element_t<R>>;
};
template <class X, class Y>
using common_t = typename CommonElement<std::remove_cvref_t<X>, std::remove_cvref_t<Y>>::type;

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

// The IR value of an operand; a scalar becomes a constant of type `d` with shape `shape`.
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

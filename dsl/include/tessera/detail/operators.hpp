// The operators of Tile<T>, as hidden friends of a base class of Tile<T>: found only through
// argument-dependent lookup on a Tile, and written with a non-deduced `At<T>` parameter so that
// the conversion to it captures the operator's source location.
//
// Each operator is constrained by a named concept instead of asserting in its body, so that the
// valid overloads never compete. A misuse of tiles and C++ numbers (`ptr + 1.5f`, `ptr * 2`,
// `int_tile && m`, `ptr < x`) then meets a refusal: an overload constrained to exactly that misuse
// (operand.hpp: PointerSumMisuse, ...) whose body is a static_assert saying what to write instead.
// Without one the compiler lists every candidate operator with its failed constraint, which reads
// as noise. A refusal's return type is deduced, so that the compiler instantiates its body, and
// prints the message, where the misuse is written: before any error that the use of its result
// (a Refused) causes. For the same reason a requires-expression or decltype that names a misuse
// is an error too, with the same message: tests/unit/compile_fail/ checks each message.
// Operands that are neither tiles nor C++ numbers (a string, a raw C++ pointer) have no overload.
#pragma once
#include <cstdint>

#include "tessera/detail/operand.hpp"

namespace tessera::detail {

enum class Refusal : std::uint8_t { Sum, Difference, Arithmetic, Bitwise, Shift, Compare, Logic };

// The body of every refused operator: exactly one static_assert below fires, the one that names
// the misuse of operands X and Y.
template <Refusal R, class X, class Y>
auto refuse() {
  constexpr bool px = PointerOperand<X>, py = PointerOperand<Y>;
  using Other = elem_t<std::conditional_t<px, Y, X>>;  // the operand next to the pointer
  if constexpr (R == Refusal::Logic)
    static_assert(always_false<X>,
                  "tessera: && and || combine two masks (Tile<bool>): make masks by comparing (x != 0); for "
                  "integer bits use & | ^; for C++ bools use a plain C++ condition");
  else if constexpr (R == Refusal::Compare)
    static_assert(always_false<X>,
                  "tessera: pointers cannot be compared (with a number or another pointer); compare the integer "
                  "offsets instead, e.g. offs < n");
  else if constexpr ((R == Refusal::Sum || R == Refusal::Difference) && px && py)
    static_assert(always_false<X>,
                  "tessera: two pointers cannot be added or subtracted; add an integer offset to one of them: p + i");
  else if constexpr (R == Refusal::Difference && !px)
    static_assert(always_false<X>,
                  "tessera: `offset - pointer` has no meaning; subtract the offset from the pointer: p - i");
  else if constexpr ((R == Refusal::Sum || R == Refusal::Difference) && std::same_as<Other, bool>)
    static_assert(always_false<X>,
                  "tessera: a mask is not a pointer offset; convert it with .to<std::int32_t>(), or choose the "
                  "offset with ts::where(mask, i, j)");
  else if constexpr (R == Refusal::Sum || R == Refusal::Difference)
    static_assert(always_false<X>,
                  "tessera: a pointer offset must be an integer, not a float; convert a float tile first, "
                  "p + i.to<std::int32_t>(), and write a C++ offset as an integer");
  else if constexpr (px || py)
    static_assert(always_false<X>,
                  "tessera: a pointer takes only + and - with an integer offset; scale the offset, not the "
                  "pointer: p + i * stride");
  else if constexpr (R == Refusal::Bitwise)
    static_assert(always_false<X>,
                  "tessera: & | ^ need integer or mask operands, not floats; convert with .to<std::int32_t>(), "
                  "or compare floats to get masks");
  else
    static_assert(always_false<X>, "tessera: << and >> shift integers; convert the operand with .to<std::int32_t>()");
  return Refused{};
}

// The two forms of a refused binary operator `sym` (tile first; C++ number first).
#define TESSERA_REFUSED_OPERATOR(sym, MISUSE, REFUSAL)                                              \
  template <class Y>                                                                                \
    requires MISUSE<Tile<T>, Y>                                                                     \
  friend auto operator sym(At<T>, const Y&) {                                                       \
    return refuse<Refusal::REFUSAL, Tile<T>, Y>();                                                  \
  }                                                                                                 \
  template <CppScalar S>                                                                            \
    requires MISUSE<S, Tile<T>>                                                                     \
  friend auto operator sym(S, At<T>) {                                                              \
    return refuse<Refusal::REFUSAL, S, Tile<T>>();                                                  \
  }

template <class X, class Y>
concept BitwiseMisuse = PointerInvolved<X, Y> || BitwiseOnNonIntegers<X, Y>;
template <class X, class Y>
concept ShiftMisuse = PointerInvolved<X, Y> || ShiftOfNonIntegers<X, Y>;

// Stops `/` and `%` of two integer tiles of different signedness (Triton raises the same error);
// a no-op for every other operator.
template <BinOp Op, class X, class Y>
constexpr void check_signedness() {
  static_assert((Op != BinOp::Div && Op != BinOp::Rem) || !mixed_signedness_division<X, Y>,
                "tessera: / and % of a signed and an unsigned integer tile are refused (as Triton's): the "
                "answer would depend on a conversion you did not write; convert one of them first, e.g. "
                "b.to<std::int32_t>()");
}

// Tile<bool>, spelled so that it depends on T: a mask-returning operator of TileOperators<bool>
// would otherwise name Tile<bool> while that class is still being defined.
template <class T>
using MaskTile = Tile<std::conditional_t<std::is_void_v<T>, T, bool>>;

template <class T>
struct TileOperators {
  // Arithmetic on numbers, in the promoted type (COMMON: common_t, or div_common_t for / and %).
#define TESSERA_NUMERIC_OPERATOR(sym, KIND, REQUIRES, COMMON)                                         \
  template <class U>                                                                                \
    requires REQUIRES<Tile<T>, Tile<U>>                                                             \
  friend Tile<COMMON<Tile<T>, Tile<U>>> operator sym(At<T> a, const Tile<U>& b) {                   \
    check_signedness<BinOp::KIND, Tile<T>, Tile<U>>();                                              \
    using C = COMMON<Tile<T>, Tile<U>>;                                                             \
    return binary<C, C>(BinOp::KIND, a.tile, b, a.loc);                                             \
  }                                                                                                 \
  template <CppScalar S>                                                                            \
    requires REQUIRES<Tile<T>, S>                                                                   \
  friend Tile<COMMON<Tile<T>, S>> operator sym(At<T> a, S b) {                                      \
    using C = COMMON<Tile<T>, S>;                                                                   \
    return binary<C, C>(BinOp::KIND, a.tile, b, a.loc);                                             \
  }                                                                                                 \
  template <CppScalar S>                                                                            \
    requires REQUIRES<S, Tile<T>>                                                                   \
  friend Tile<COMMON<S, Tile<T>>> operator sym(S a, At<T> b) {                                      \
    using C = COMMON<S, Tile<T>>;                                                                   \
    return binary<C, C>(BinOp::KIND, a, b.tile, b.loc);                                            \
  }

  TESSERA_NUMERIC_OPERATOR(*, Mul, NumericOperands, common_t)
  TESSERA_NUMERIC_OPERATOR(/, Div, NumericOperands, div_common_t)
  TESSERA_NUMERIC_OPERATOR(%, Rem, NumericOperands, div_common_t)
  TESSERA_NUMERIC_OPERATOR(&, And, IntegerOperands, common_t)
  TESSERA_NUMERIC_OPERATOR(|, Or, IntegerOperands, common_t)
  TESSERA_NUMERIC_OPERATOR(^, Xor, IntegerOperands, common_t)
  TESSERA_NUMERIC_OPERATOR(<<, Shl, ShiftOperands, common_t)
  TESSERA_NUMERIC_OPERATOR(>>, Shr, ShiftOperands, common_t)
#undef TESSERA_NUMERIC_OPERATOR
  TESSERA_REFUSED_OPERATOR(*, PointerInvolved, Arithmetic)
  TESSERA_REFUSED_OPERATOR(/, PointerInvolved, Arithmetic)
  TESSERA_REFUSED_OPERATOR(%, PointerInvolved, Arithmetic)
  TESSERA_REFUSED_OPERATOR(&, BitwiseMisuse, Bitwise)
  TESSERA_REFUSED_OPERATOR(|, BitwiseMisuse, Bitwise)
  TESSERA_REFUSED_OPERATOR(^, BitwiseMisuse, Bitwise)
  TESSERA_REFUSED_OPERATOR(<<, ShiftMisuse, Shift)
  TESSERA_REFUSED_OPERATOR(>>, ShiftMisuse, Shift)

  // + and - on numbers, and pointer arithmetic: ptr + int, int + ptr, ptr - int.
#define TESSERA_ADDITIVE_OPERATOR(sym, KIND, SUBTRACT)                                                \
  template <class U>                                                                                \
    requires NumericOperands<Tile<T>, Tile<U>>                                                      \
  friend Tile<common_t<Tile<T>, Tile<U>>> operator sym(At<T> a, const Tile<U>& b) {                 \
    using C = common_t<Tile<T>, Tile<U>>;                                                           \
    return binary<C, C>(BinOp::KIND, a.tile, b, a.loc);                                             \
  }                                                                                                 \
  template <CppScalar S>                                                                            \
    requires NumericOperands<Tile<T>, S>                                                            \
  friend Tile<common_t<Tile<T>, S>> operator sym(At<T> a, S b) {                                    \
    using C = common_t<Tile<T>, S>;                                                                 \
    return binary<C, C>(BinOp::KIND, a.tile, b, a.loc);                                             \
  }                                                                                                 \
  template <CppScalar S>                                                                            \
    requires NumericOperands<S, Tile<T>>                                                            \
  friend Tile<common_t<S, Tile<T>>> operator sym(S a, At<T> b) {                                    \
    using C = common_t<S, Tile<T>>;                                                                 \
    return binary<C, C>(BinOp::KIND, a, b.tile, b.loc);                                             \
  }                                                                                                 \
  template <class I>                                                                                \
    requires PointerPlusInteger<Tile<T>, I>                                                         \
  friend Tile<T> operator sym(At<T> p, const I& offset) {                                           \
    return add_pointer(p.tile, offset, SUBTRACT, p.loc);                                            \
  }
  TESSERA_ADDITIVE_OPERATOR(+, Add, false)
  TESSERA_ADDITIVE_OPERATOR(-, Sub, true)
#undef TESSERA_ADDITIVE_OPERATOR

  // offset + ptr (an integer tile or C++ integer first).
  template <class P>
    requires PointerPlusInteger<Tile<P>, Tile<T>>
  friend Tile<P> operator+(At<T> offset, const Tile<P>& p) {
    return add_pointer(p, offset.tile, false, offset.loc);
  }
  template <std::integral S>
    requires PointerPlusInteger<Tile<T>, S>
  friend Tile<T> operator+(S offset, At<T> p) {
    return add_pointer(p.tile, offset, false, p.loc);
  }
  TESSERA_REFUSED_OPERATOR(+, PointerSumMisuse, Sum)
  TESSERA_REFUSED_OPERATOR(-, PointerDifferenceMisuse, Difference)

  // Comparisons give masks (Tile<bool>); the operands compare in their promoted type (a C++
  // number at its own type: `u8 < 300` compares in i32, as Triton).
#define TESSERA_COMPARE_OPERATOR(sym, KIND)                                                           \
  template <class U>                                                                                \
    requires NumericOperands<Tile<T>, Tile<U>>                                                      \
  friend MaskTile<T> operator sym(At<T> a, const Tile<U>& b) {                                       \
    return binary<bool, common_t<Tile<T>, Tile<U>>>(BinOp::KIND, a.tile, b, a.loc);                 \
  }                                                                                                 \
  template <CppScalar S>                                                                            \
    requires NumericOperands<Tile<T>, S>                                                            \
  friend MaskTile<T> operator sym(At<T> a, S b) {                                                    \
    return binary<bool, strong_common_t<Tile<T>, S>>(BinOp::KIND, a.tile, b, a.loc);                \
  }                                                                                                 \
  template <CppScalar S>                                                                            \
    requires NumericOperands<S, Tile<T>>                                                            \
  friend MaskTile<T> operator sym(S a, At<T> b) {                                                    \
    return binary<bool, strong_common_t<S, Tile<T>>>(BinOp::KIND, a, b.tile, b.loc);                \
  }
  TESSERA_COMPARE_OPERATOR(==, Eq)
  TESSERA_COMPARE_OPERATOR(!=, Ne)
  TESSERA_COMPARE_OPERATOR(<, Lt)
  TESSERA_COMPARE_OPERATOR(<=, Le)
  TESSERA_COMPARE_OPERATOR(>, Gt)
  TESSERA_COMPARE_OPERATOR(>=, Ge)
#undef TESSERA_COMPARE_OPERATOR
  TESSERA_REFUSED_OPERATOR(==, PointerInvolved, Compare)
  TESSERA_REFUSED_OPERATOR(!=, PointerInvolved, Compare)
  TESSERA_REFUSED_OPERATOR(<, PointerInvolved, Compare)
  TESSERA_REFUSED_OPERATOR(<=, PointerInvolved, Compare)
  TESSERA_REFUSED_OPERATOR(>, PointerInvolved, Compare)
  TESSERA_REFUSED_OPERATOR(>=, PointerInvolved, Compare)

  // Logic on masks. Both sides are always evaluated (they are tiles, not C++ conditions).
  template <class U>
    requires MaskOperands<Tile<T>, Tile<U>>
  friend MaskTile<T> operator&&(At<T> a, const Tile<U>& b) {
    return binary<bool, bool>(BinOp::And, a.tile, b, a.loc);
  }
  template <class U>
    requires MaskOperands<Tile<T>, Tile<U>>
  friend MaskTile<T> operator||(At<T> a, const Tile<U>& b) {
    return binary<bool, bool>(BinOp::Or, a.tile, b, a.loc);
  }
  TESSERA_REFUSED_OPERATOR(&&, LogicOnNonMasks, Logic)
  TESSERA_REFUSED_OPERATOR(||, LogicOnNonMasks, Logic)
  // `!` takes the tile itself, not an At<T> that would record the user's line: Tile's explicit
  // conversion to bool (tile.hpp, which refuses `if (tile)`) makes the built-in `!` a candidate,
  // and only an exact match beats it. So the op is stamped with this line, not the user's.
  friend MaskTile<T> operator!(const Tile<T>& a)
    requires std::same_as<T, bool>
  {
    const Loc loc = Loc::current();
    return MaskTile<T>(emit_unary(UnOp::Not, a.ir_value(loc), loc), loc);
  }
  friend auto operator!(const Tile<T>&)
    requires(!std::same_as<T, bool>)
  {
    static_assert(always_false<T>, "tessera: ! negates a mask (Tile<bool>); for a number compare it instead: x == 0");
    return Refused{};
  }
  friend Tile<T> operator~(At<T> a)
    requires IntegerOrBool<T>
  {
    return Tile<T>(emit_unary(UnOp::Not, a.tile.ir_value(a.loc), a.loc), a.loc);
  }
  friend Tile<T> operator-(At<T> a)
    requires Numeric<T>
  {
    return Tile<T>(emit_unary(UnOp::Neg, a.tile.ir_value(a.loc), a.loc), a.loc);
  }
  friend auto operator-(At<T>)
    requires PointerElement<T>
  {
    return refuse<Refusal::Arithmetic, Tile<T>, Tile<T>>();
  }
  friend Tile<T> operator+(At<T> a)
    requires Numeric<T>
  {
    return a.tile;
  }

  // x op= y is x = x op y; the result must keep x's element type (as a loop-carried value must).
#define TESSERA_COMPOUND_OPERATOR(sym, op)                                                            \
  template <class Y>                                                                                \
    requires requires(const Tile<T>& x, const Y& y) { x op y; }                                     \
  friend Tile<T>& operator sym(AtMut<T> x, const Y& y) {                                            \
    auto r = At<T>(x.tile, x.loc) op y;                                                             \
    if constexpr (!std::is_same_v<decltype(r), Refused>) { /* a refusal has said why already */   \
      static_assert(std::is_same_v<decltype(r), Tile<T>>,                                           \
                    "tessera: `x op= y` would change x's element type; write x = (x op y).to<T>()"); \
      x.tile = r;                                                                                   \
    }                                                                                               \
    return x.tile;                                                                                  \
  }
  TESSERA_COMPOUND_OPERATOR(+=, +)
  TESSERA_COMPOUND_OPERATOR(-=, -)
  TESSERA_COMPOUND_OPERATOR(*=, *)
  TESSERA_COMPOUND_OPERATOR(/=, /)
  TESSERA_COMPOUND_OPERATOR(%=, %)
  TESSERA_COMPOUND_OPERATOR(&=, &)
  TESSERA_COMPOUND_OPERATOR(|=, |)
  TESSERA_COMPOUND_OPERATOR(^=, ^)
#undef TESSERA_COMPOUND_OPERATOR
};

#undef TESSERA_REFUSED_OPERATOR

}  // namespace tessera::detail

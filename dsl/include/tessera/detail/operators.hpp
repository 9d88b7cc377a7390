// The operators of Tile<T>, as hidden friends of a base class of Tile<T>: found only through
// argument-dependent lookup on a Tile, and written with a non-deduced `At<T>` parameter so that
// the conversion to it captures the operator's source location.
//
// Each operator is constrained by a named concept instead of asserting in its body: a misuse such
// as `ptr + 1.5f` then has no viable overload (testable with a requires-expression), and the
// compiler's notes name the failed requirement (PointerPlusInteger, NumericOperands, ...).
#pragma once
#include "tessera/detail/operand.hpp"

namespace tessera::detail {

// Tile<bool>, spelled so that it depends on T: a mask-returning operator of TileOperators<bool>
// would otherwise name Tile<bool> while that class is still being defined.
template <class T>
using MaskTile = Tile<std::conditional_t<std::is_void_v<T>, T, bool>>;

template <class T>
struct TileOperators {
  // Arithmetic on numbers, in the promoted type.
#define TESSERA_NUMERIC_OPERATOR(sym, KIND, REQUIRES)                                                 \
  template <class U>                                                                                \
    requires REQUIRES<Tile<T>, Tile<U>>                                                             \
  friend Tile<common_t<Tile<T>, Tile<U>>> operator sym(At<T> a, const Tile<U>& b) {                 \
    using C = common_t<Tile<T>, Tile<U>>;                                                           \
    return binary<C, C>(BinOp::KIND, a.tile, b, a.loc);                                             \
  }                                                                                                 \
  template <CppScalar S>                                                                            \
    requires REQUIRES<Tile<T>, S>                                                                   \
  friend Tile<common_t<Tile<T>, S>> operator sym(At<T> a, S b) {                                    \
    using C = common_t<Tile<T>, S>;                                                                 \
    return binary<C, C>(BinOp::KIND, a.tile, b, a.loc);                                             \
  }                                                                                                 \
  template <CppScalar S>                                                                            \
    requires REQUIRES<S, Tile<T>>                                                                   \
  friend Tile<common_t<S, Tile<T>>> operator sym(S a, At<T> b) {                                    \
    using C = common_t<S, Tile<T>>;                                                                 \
    return binary<C, C>(BinOp::KIND, a, b.tile, b.loc);                                            \
  }

  TESSERA_NUMERIC_OPERATOR(*, Mul, NumericOperands)
  TESSERA_NUMERIC_OPERATOR(/, Div, NumericOperands)
  TESSERA_NUMERIC_OPERATOR(%, Rem, NumericOperands)
  TESSERA_NUMERIC_OPERATOR(&, And, IntegerOperands)
  TESSERA_NUMERIC_OPERATOR(|, Or, IntegerOperands)
  TESSERA_NUMERIC_OPERATOR(^, Xor, IntegerOperands)
  TESSERA_NUMERIC_OPERATOR(<<, Shl, ShiftOperands)
  TESSERA_NUMERIC_OPERATOR(>>, Shr, ShiftOperands)
#undef TESSERA_NUMERIC_OPERATOR

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

  // Comparisons give masks (Tile<bool>); the operands compare in their promoted type.
#define TESSERA_COMPARE_OPERATOR(sym, KIND)                                                           \
  template <class U>                                                                                \
    requires NumericOperands<Tile<T>, Tile<U>>                                                      \
  friend MaskTile<T> operator sym(At<T> a, const Tile<U>& b) {                                       \
    return binary<bool, common_t<Tile<T>, Tile<U>>>(BinOp::KIND, a.tile, b, a.loc);                 \
  }                                                                                                 \
  template <CppScalar S>                                                                            \
    requires NumericOperands<Tile<T>, S>                                                            \
  friend MaskTile<T> operator sym(At<T> a, S b) {                                                    \
    return binary<bool, common_t<Tile<T>, S>>(BinOp::KIND, a.tile, b, a.loc);                       \
  }                                                                                                 \
  template <CppScalar S>                                                                            \
    requires NumericOperands<S, Tile<T>>                                                            \
  friend MaskTile<T> operator sym(S a, At<T> b) {                                                    \
    return binary<bool, common_t<S, Tile<T>>>(BinOp::KIND, a, b.tile, b.loc);                       \
  }
  TESSERA_COMPARE_OPERATOR(==, Eq)
  TESSERA_COMPARE_OPERATOR(!=, Ne)
  TESSERA_COMPARE_OPERATOR(<, Lt)
  TESSERA_COMPARE_OPERATOR(<=, Le)
  TESSERA_COMPARE_OPERATOR(>, Gt)
  TESSERA_COMPARE_OPERATOR(>=, Ge)
#undef TESSERA_COMPARE_OPERATOR

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
  friend MaskTile<T> operator!(At<T> a)
    requires std::same_as<T, bool>
  {
    return MaskTile<T>(emit_unary(UnOp::Not, a.tile.ir_value(a.loc), a.loc), a.loc);
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
    auto r = At<T>(x.tile, x.loc) op y;                                                                        \
    static_assert(std::is_same_v<decltype(r), Tile<T>>,                                             \
                  "tessera: `x op= y` would change x's element type; write x = (x op y).to<T>()");  \
    x.tile = r;                                                                                     \
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

}  // namespace tessera::detail

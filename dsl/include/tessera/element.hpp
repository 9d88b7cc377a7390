// Element types of tiles and the type-promotion rules, decided entirely at C++ compile time.
//
// A tile's element type is a C++ type: bool (i1), int8_t, int16_t, int32_t, int64_t, uint8_t,
// uint16_t, uint32_t, uint64_t, tessera::float8_e4m3 / float8_e5m2 (fp8), tessera::half (f16),
// tessera::bfloat16 (bf16), float, double, or Pointer<one of those>.
// Promotion is Triton 3.6's (semantic.py, computation_type_impl): f64, then f32, wins; f16 with
// anything narrower gives f16 (f16 with bf16 too); bf16 with bf16 gives bf16 and bf16 with
// anything else f32; `/` and `%` with an f16 or bf16 operand compute in f32; two fp8 tiles of one
// format keep it, of the two formats give f16; fp8 with an integer tile is refused (Triton's
// TypeError); ints promote by rank and signedness as C's usual conversions (bool is an unsigned
// 1-bit int). A C++ scalar next to a
// tile is "weak" when its kind (bool < integer < float) is not above the tile's: it takes the
// tile's type (f32 for `/` and `%` of an f16/bf16 tile); otherwise its own type (int: i32, wider
// or unsigned per its C++ type; floating: f32) promotes with the tile's as above. Comparisons and
// minimum/maximum/clamp take a C++ scalar at its own type (Triton's strong literal there), and
// minimum/maximum/clamp compute bf16 in f32.
#pragma once
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "tessera/dtype.hpp"
#include "tessera/float8.hpp"
#include "tessera/half.hpp"

namespace tessera {

// The element tag of a pointer tile: Tile<Pointer<float>> is a (tile of) pointer(s) to float.
template <class T>
struct Pointer {
  using pointee = T;
};

enum class ElementKind : std::uint8_t { Bool, Int, Float, Pointer };

template <class T>
struct ElementTraits {
  static constexpr bool valid = false;
};

namespace detail {
template <DType D, ElementKind K, bool Signed>
struct ElementInfo {
  static constexpr bool valid = true;
  static constexpr DType dtype = D;
  static constexpr DType pointee = DType::I32;  // unused except for pointers
  static constexpr ElementKind kind = K;
  static constexpr bool is_signed = Signed;
};
}  // namespace detail

template <> struct ElementTraits<bool> : detail::ElementInfo<DType::I1, ElementKind::Bool, false> {};
template <> struct ElementTraits<std::int8_t> : detail::ElementInfo<DType::I8, ElementKind::Int, true> {};
template <> struct ElementTraits<std::int16_t> : detail::ElementInfo<DType::I16, ElementKind::Int, true> {};
template <> struct ElementTraits<std::int32_t> : detail::ElementInfo<DType::I32, ElementKind::Int, true> {};
template <> struct ElementTraits<std::int64_t> : detail::ElementInfo<DType::I64, ElementKind::Int, true> {};
template <> struct ElementTraits<std::uint8_t> : detail::ElementInfo<DType::U8, ElementKind::Int, false> {};
template <> struct ElementTraits<std::uint16_t> : detail::ElementInfo<DType::U16, ElementKind::Int, false> {};
template <> struct ElementTraits<std::uint32_t> : detail::ElementInfo<DType::U32, ElementKind::Int, false> {};
template <> struct ElementTraits<std::uint64_t> : detail::ElementInfo<DType::U64, ElementKind::Int, false> {};
template <> struct ElementTraits<float8_e4m3> : detail::ElementInfo<DType::F8E4M3, ElementKind::Float, true> {};
template <> struct ElementTraits<float8_e5m2> : detail::ElementInfo<DType::F8E5M2, ElementKind::Float, true> {};
template <> struct ElementTraits<half> : detail::ElementInfo<DType::F16, ElementKind::Float, true> {};
template <> struct ElementTraits<bfloat16> : detail::ElementInfo<DType::BF16, ElementKind::Float, true> {};
template <> struct ElementTraits<float> : detail::ElementInfo<DType::F32, ElementKind::Float, true> {};
template <> struct ElementTraits<double> : detail::ElementInfo<DType::F64, ElementKind::Float, true> {};

// A scalar element type (not a pointer).
template <class T>
concept Element = ElementTraits<T>::valid && ElementTraits<T>::kind != ElementKind::Pointer;

template <Element T>
struct ElementTraits<Pointer<T>> {
  static constexpr bool valid = true;
  static constexpr DType dtype = DType::Ptr;
  static constexpr DType pointee = ElementTraits<T>::dtype;
  static constexpr ElementKind kind = ElementKind::Pointer;
  static constexpr bool is_signed = false;
};

// Anything a Tile may hold: an Element or a Pointer to one.
template <class T>
concept TileElement = Element<T> || (ElementTraits<T>::valid && ElementTraits<T>::kind == ElementKind::Pointer);

template <class T>
inline constexpr ElementKind kind_of = ElementTraits<T>::kind;

// The concepts below are named for what they require, so that a failed constraint reads as a
// sentence in the compiler's notes ("PointerOffset<Pointer<float>, float> evaluated to false").
template <class T>
concept Numeric = Element<T>;  // bool, ints and floats; not pointers
template <class T>
concept IntegerElement = Element<T> && kind_of<T> == ElementKind::Int;
template <class T>
concept IntegerOrBool = Element<T> && (kind_of<T> == ElementKind::Int || kind_of<T> == ElementKind::Bool);
template <class T>
concept FloatElement = Element<T> && kind_of<T> == ElementKind::Float;
template <class T>
concept PointerElement = TileElement<T> && kind_of<T> == ElementKind::Pointer;
template <class P, class I>
concept PointerOffset = PointerElement<P> && IntegerElement<I>;
// A C++ value usable as an operand next to a tile (a "weak" scalar).
template <class S>
concept CppScalar = std::is_arithmetic_v<S>;

namespace detail {

template <DType D> struct TypeOf;
template <> struct TypeOf<DType::I1> { using type = bool; };
template <> struct TypeOf<DType::I8> { using type = std::int8_t; };
template <> struct TypeOf<DType::I16> { using type = std::int16_t; };
template <> struct TypeOf<DType::I32> { using type = std::int32_t; };
template <> struct TypeOf<DType::I64> { using type = std::int64_t; };
template <> struct TypeOf<DType::U8> { using type = std::uint8_t; };
template <> struct TypeOf<DType::U16> { using type = std::uint16_t; };
template <> struct TypeOf<DType::U32> { using type = std::uint32_t; };
template <> struct TypeOf<DType::U64> { using type = std::uint64_t; };
template <> struct TypeOf<DType::F8E4M3> { using type = float8_e4m3; };
template <> struct TypeOf<DType::F8E5M2> { using type = float8_e5m2; };
template <> struct TypeOf<DType::F16> { using type = half; };
template <> struct TypeOf<DType::BF16> { using type = bfloat16; };
template <> struct TypeOf<DType::F32> { using type = float; };
template <> struct TypeOf<DType::F64> { using type = double; };

constexpr int bits_of(DType d) {
  switch (d) {
    case DType::I1: return 1;
    case DType::I8: case DType::U8: case DType::F8E4M3: case DType::F8E5M2: return 8;
    case DType::I16: case DType::U16: case DType::F16: case DType::BF16: return 16;
    case DType::I32: case DType::U32: case DType::F32: return 32;
    default: return 64;
  }
}
constexpr bool is_fp8_dtype(DType d) { return d == DType::F8E4M3 || d == DType::F8E5M2; }
constexpr bool is_float_dtype(DType d) {
  return d == DType::F16 || d == DType::BF16 || d == DType::F32 || d == DType::F64 || is_fp8_dtype(d);
}
constexpr bool is_unsigned_dtype(DType d) { return d == DType::U8 || d == DType::U16 || d == DType::U32 || d == DType::U64; }
// Signedness in Triton's promotion rules, where bool (int1) counts as unsigned.
constexpr bool promotes_unsigned(DType d) { return d == DType::I1 || is_unsigned_dtype(d); }

constexpr bool is_narrow_float(DType d) { return d == DType::F16 || d == DType::BF16; }

// C's usual conversions of two integer types (Triton's integer_promote_impl): within a signedness
// the wider wins; an unsigned type at least as wide as the signed one wins, else the signed one.
constexpr DType promote_integers(DType a, DType b) {
  const bool ua = promotes_unsigned(a), ub = promotes_unsigned(b);
  if (ua == ub) return bits_of(a) > bits_of(b) ? a : b;
  if (ua) return bits_of(a) >= bits_of(b) ? a : b;
  return bits_of(b) >= bits_of(a) ? b : a;
}

// Triton's type of a binary op on two tile operands (see the file comment); div_or_mod for `/`
// and `%`. Ints of different signedness under `/` and `%` are refused where the operator is
// written (operators.hpp), not here.
constexpr DType promote(DType a, DType b, bool div_or_mod = false) {
  if (a == DType::F64 || b == DType::F64) return DType::F64;
  if (a == DType::F32 || b == DType::F32) return DType::F32;
  if (a == DType::F16 || b == DType::F16) return div_or_mod ? DType::F32 : DType::F16;
  if (a == DType::BF16 && b == DType::BF16) return div_or_mod ? DType::F32 : DType::BF16;
  if (a == DType::BF16 || b == DType::BF16) return DType::F32;
  if (is_fp8_dtype(a) && is_fp8_dtype(b)) return a == b ? a : DType::F16;
  // fp8 with an integer: Triton's TypeError, refused where the operator is written (mixes_fp8_with_int).
  if (is_fp8_dtype(a) || is_fp8_dtype(b)) return is_fp8_dtype(a) ? a : b;
  return promote_integers(a, b);
}

// An fp8 operand next to an integer one: no type holds both (Triton raises a TypeError).
constexpr bool mixes_fp8_with_int(DType a, DType b) {
  return (is_fp8_dtype(a) && !is_float_dtype(b)) || (is_fp8_dtype(b) && !is_float_dtype(a));
}

// The kind order of Triton's weak-scalar rule: bool < integer < float.
constexpr int kind_rank(DType d) { return d == DType::I1 ? 0 : is_float_dtype(d) ? 2 : 1; }

// The type a C++ scalar of type S has where it decides a type: bool, i32 (i64 for 64-bit
// integers, u64 for 64-bit unsigned ones, u32 for 32-bit unsigned ones: C++ types the literal,
// where Triton types it by value),
// f32 for floating values (as a Python float).
template <class S>
constexpr DType scalar_dtype() {
  if constexpr (std::is_same_v<S, bool>) return DType::I1;
  else if constexpr (std::is_floating_point_v<S>) return DType::F32;
  else if constexpr (sizeof(S) == 8) return std::is_unsigned_v<S> ? DType::U64 : DType::I64;
  else if constexpr (std::is_unsigned_v<S> && sizeof(S) == 4) return DType::U32;
  else return DType::I32;
}

// A tile of T next to a C++ scalar S (Triton's rule 0 for a scalar operand).
template <class T, class S>
constexpr DType promote_weak(bool div_or_mod = false) {
  constexpr DType t = ElementTraits<T>::dtype, s = scalar_dtype<S>();
  if (kind_rank(s) <= kind_rank(t)) return div_or_mod && is_narrow_float(t) ? DType::F32 : t;
  return promote(s, t, div_or_mod);
}

}  // namespace detail

namespace detail {
// A tile of T next to a C++ scalar S where the scalar is strong (comparisons, minimum, maximum).
template <class T, class S>
constexpr DType promote_strong() {
  return promote(ElementTraits<T>::dtype, scalar_dtype<S>());
}
}  // namespace detail

template <Element A, Element B, bool DivOrMod = false>
using promote_t =
    typename detail::TypeOf<detail::promote(ElementTraits<A>::dtype, ElementTraits<B>::dtype, DivOrMod)>::type;

template <Element T, CppScalar S, bool DivOrMod = false>
using promote_weak_t = typename detail::TypeOf<detail::promote_weak<T, S>(DivOrMod)>::type;

// An element type as an argument, as Triton's dtype= (ts::sum(x, 0, ts::as<float>)).
template <class T>
struct As {
  static_assert(Element<T>, "tessera::as<T>: T must be an element type (bool, an int, half, bfloat16, float, double)");
  using type = T;
};
template <class T>
inline constexpr As<T> as{};

template <class T>
inline constexpr DType dtype_of = ElementTraits<T>::dtype;

}  // namespace tessera

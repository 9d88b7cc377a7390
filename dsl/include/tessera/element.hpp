// Element types of tiles and the type-promotion rules, decided entirely at C++ compile time.
//
// A tile's element type is a C++ type: bool (i1), int8_t, int16_t, int32_t, int64_t, uint8_t,
// uint32_t, tessera::half (f16), tessera::bfloat16 (bf16), float, double, or Pointer<one of those>.
// Promotion follows Triton: within a kind the wider type wins, int with float gives the float,
// f16 with bf16 gives f32, bool with anything gives the other, and signed with unsigned of the same
// width gives the unsigned type. A C++ scalar next to a tile is "weak": an integer keeps the tile's
// type, a floating value keeps a float tile's type and turns an integer tile into f32.
#pragma once
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "tessera/dtype.hpp"
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
template <> struct ElementTraits<std::uint32_t> : detail::ElementInfo<DType::U32, ElementKind::Int, false> {};
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
template <> struct TypeOf<DType::U32> { using type = std::uint32_t; };
template <> struct TypeOf<DType::F16> { using type = half; };
template <> struct TypeOf<DType::BF16> { using type = bfloat16; };
template <> struct TypeOf<DType::F32> { using type = float; };
template <> struct TypeOf<DType::F64> { using type = double; };

constexpr int bits_of(DType d) {
  switch (d) {
    case DType::I1: return 1;
    case DType::I8: case DType::U8: return 8;
    case DType::I16: case DType::F16: case DType::BF16: return 16;
    case DType::I32: case DType::U32: case DType::F32: return 32;
    default: return 64;
  }
}
constexpr bool is_float_dtype(DType d) { return d == DType::F16 || d == DType::BF16 || d == DType::F32 || d == DType::F64; }
constexpr bool is_unsigned_dtype(DType d) { return d == DType::U8 || d == DType::U32; }

// Triton's rules for two tile operands (see the file comment).
constexpr DType promote(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::I1) return b;
  if (b == DType::I1) return a;
  const bool fa = is_float_dtype(a), fb = is_float_dtype(b);
  if (fa != fb) return fa ? a : b;
  if (fa) {
    if (bits_of(a) == 16 && bits_of(b) == 16) return DType::F32;  // f16 with bf16
    return bits_of(a) > bits_of(b) ? a : b;
  }
  if (bits_of(a) != bits_of(b)) return bits_of(a) > bits_of(b) ? a : b;
  return is_unsigned_dtype(a) ? a : b;
}

// A tile of T next to a C++ scalar S (a weak operand).
template <class T, class S>
constexpr DType promote_weak() {
  constexpr DType t = ElementTraits<T>::dtype;
  if constexpr (std::is_floating_point_v<S>) return is_float_dtype(t) ? t : DType::F32;
  else return t == DType::I1 && !std::is_same_v<S, bool> ? DType::I32 : t;
}

}  // namespace detail

template <Element A, Element B>
using promote_t = typename detail::TypeOf<detail::promote(ElementTraits<A>::dtype, ElementTraits<B>::dtype)>::type;

template <Element T, CppScalar S>
using promote_weak_t = typename detail::TypeOf<detail::promote_weak<T, S>()>::type;

template <class T>
inline constexpr DType dtype_of = ElementTraits<T>::dtype;

}  // namespace tessera

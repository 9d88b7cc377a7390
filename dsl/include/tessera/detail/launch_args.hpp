// How a C++ launch argument becomes an ArgValue, checked against the kernel parameter at compile
// time: a Ptr<T> takes T*, const T*, void*, nullptr, or a tensor-like object (.data()/.size(), or
// .data_ptr()/.numel()); an integer parameter takes any C++ integer; a float parameter any number.
#pragma once
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "tessera/args.hpp"
#include "tessera/error.hpp"
#include "tessera/tile.hpp"

namespace tessera::detail {

template <class C, class E>
concept PointerTo = std::is_pointer_v<C> && (std::is_same_v<std::remove_cv_t<std::remove_pointer_t<C>>, E> ||
                                             std::is_void_v<std::remove_pointer_t<C>>);

// A contiguous container or span of E: .data() returns a pointer to E, .size() its element count.
template <class C, class E>
concept ContiguousOf = requires(C& c) {
  { c.data() } -> PointerTo<E>;
  { c.size() } -> std::convertible_to<std::size_t>;
};
// A framework tensor (torch::Tensor and alike): .data_ptr() and .numel().
template <class C>
concept TensorLike = requires(C& c) {
  { c.data_ptr() } -> std::convertible_to<const void*>;
  { c.numel() } -> std::convertible_to<std::int64_t>;
};

template <class Param, class C>
concept ArgFits = [] {
  using T = typename Param::element_type;
  using A = std::remove_cvref_t<C>;
  if constexpr (PointerElement<T>) {
    using E = typename T::pointee;
    return std::is_null_pointer_v<A> || PointerTo<std::decay_t<A>, E> || ContiguousOf<A, E> || TensorLike<A>;
  } else if constexpr (FloatElement<T>) {
    return std::is_arithmetic_v<A>;
  } else {
    return std::is_integral_v<A>;
  }
}();

inline void* erase_const(const void* p) { return const_cast<void*>(p); }

// The bytes of a tensor argument of `numel` elements of E: a negative count or one whose byte
// size does not fit size_t is refused (it would otherwise wrap into a small, wrong bound).
template <class E>
std::size_t tensor_bytes(std::size_t index, std::int64_t numel) {
  std::size_t bytes = 0;
  if (numel < 0 || __builtin_mul_overflow(static_cast<std::size_t>(numel), sizeof(E), &bytes))
    throw LaunchError("argument " + std::to_string(index) + " is a tensor of " + std::to_string(numel) +
                      " elements, which is not a valid size");
  return bytes;
}

template <std::size_t I, class Param, class C>
ArgValue to_arg_value(C& c) {
  static_assert(ArgFits<Param, C>,
                "tessera: a launch argument does not fit its kernel parameter (see the index I in this "
                "instantiation): ts::Ptr<T> takes T*, const T*, void*, nullptr or a container/tensor of T; "
                "an integer parameter takes a C++ integer; a float parameter takes a C++ number");
  using T = typename Param::element_type;
  using A = std::remove_cvref_t<C>;
  if constexpr (PointerElement<T>) {
    using E = typename T::pointee;
    constexpr DType pointee = ElementTraits<T>::pointee;
    if constexpr (std::is_null_pointer_v<A>) return ArgValue::pointer(nullptr, pointee);
    else if constexpr (std::is_array_v<A>) return ArgValue::pointer(erase_const(c), pointee, sizeof(A));
    else if constexpr (std::is_pointer_v<A>) return ArgValue::pointer(erase_const(c), pointee);
    else if constexpr (ContiguousOf<A, E>) return ArgValue::pointer(erase_const(c.data()), pointee, c.size() * sizeof(E));
    else return ArgValue::pointer(erase_const(c.data_ptr()), pointee, tensor_bytes<E>(I, c.numel()));
  } else if constexpr (FloatElement<T>) {
    return ArgValue::floating(static_cast<double>(c), dtype_of<T>);
  } else {
    constexpr DType d = dtype_of<T>;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<A, bool>) {
      return ArgValue::integer(c ? 1 : 0, d);
    } else {
      if (!std::in_range<T>(c))
        throw LaunchError("argument " + std::to_string(I) + " = " + std::to_string(c) +
                          " does not fit the kernel parameter's integer type");
      return ArgValue::integer(static_cast<std::int64_t>(c), d);
    }
  }
}

}  // namespace tessera::detail

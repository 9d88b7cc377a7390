// How a C++ launch argument becomes an ArgValue, checked against the kernel parameter at compile
// time: a Ptr<T> takes T*, const T*, void*, nullptr, or a tensor-like object (.data()/.size(), or
// .data_ptr()/.numel(), or a tensor a TensorArgument specialization describes: DLPack's in
// tessera/dlpack.hpp); an integer parameter takes any C++ integer; a float parameter any number.
// ts::tensor_args<R>(t) passes a tensor and then its R sizes and R strides as the next 2R integer
// parameters, so that a kernel over a strided view needs no hand-written stride plumbing.
#pragma once
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

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
// Containers whose elements are always in the host's memory (a span or a custom container may
// wrap device memory, so it says nothing): a GPU launch refuses them, naming the argument, instead
// of handing the GPU a host address it cannot read.
template <class C>
inline constexpr bool is_host_container = false;
template <class E, class Alloc>
inline constexpr bool is_host_container<std::vector<E, Alloc>> = true;
template <class E, std::size_t N>
inline constexpr bool is_host_container<std::array<E, N>> = true;

// A framework tensor (torch::Tensor and alike): .data_ptr() and .numel().
template <class C>
concept TensorLike = requires(C& c) {
  { c.data_ptr() } -> std::convertible_to<const void*>;
  { c.numel() } -> std::convertible_to<std::int64_t>;
};

// What a framework tensor says about itself. Filled by TensorArgument<A>::describe, which throws a
// LaunchError naming argument `index` for a tensor tessera cannot take (a dtype it has no element
// type for, vector lanes, negative strides).
struct TensorDescription {
  void* data = nullptr;          // the first element (a DLPack byte_offset already applied)
  DType dtype = DType::F32;      // the element type, checked against the Ptr<T> parameter
  MemoryPlace place = MemoryPlace::Unknown;
  int device = -1;
  std::size_t bytes = 0;         // from the first element to one past the last one the tensor reaches
  int rank = 0;
  const std::int64_t* shape = nullptr;
  const std::int64_t* strides = nullptr;  // in elements; null: compact row-major
};
// Specialized for each kind of tensor tessera takes (tessera/dlpack.hpp, tessera/torch.hpp):
//   static TensorDescription describe(const A& tensor, std::size_t index);
template <class A>
struct TensorArgument;
template <class A>
concept DescribedTensor = requires(const A& a) {
  { TensorArgument<A>::describe(a, std::size_t{0}) } -> std::same_as<TensorDescription>;
};

// How errors name a launch argument; ts::tensor_args describes its tensor before the arguments are
// numbered, and passes no_argument_index.
inline constexpr std::size_t no_argument_index = static_cast<std::size_t>(-1);
inline std::string argument_label(std::size_t index) {
  return index == no_argument_index ? std::string("the tensor of a ts::tensor_args") : "argument " + std::to_string(index);
}

// The elements a tensor of this shape and these strides reaches, from its first: 0 for an empty
// one; refused when it overflows (a bound that wrapped would be small and wrong).
inline std::size_t tensor_extent(std::size_t index, int rank, const std::int64_t* shape, const std::int64_t* strides) {
  std::int64_t last = 0, compact = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (shape[d] < 0) throw LaunchError(argument_label(index) + " is a tensor with a negative size");
    if (shape[d] == 0) return 0;
    const std::int64_t stride = strides != nullptr ? strides[d] : compact;
    if (stride < 0)
      throw LaunchError(argument_label(index) +
                        " is a tensor with a negative stride, which tessera does not take: pass a view with "
                        "non-negative strides (e.g. a copy of the flipped tensor)");
    std::int64_t reach = 0;
    if (__builtin_mul_overflow(shape[d] - 1, stride, &reach) || __builtin_add_overflow(last, reach, &last) ||
        __builtin_mul_overflow(compact, shape[d], &compact))
      throw LaunchError(argument_label(index) + " is a tensor whose extent overflows 64 bits");
  }
  return static_cast<std::size_t>(last) + 1;
}

template <class Param, class C>
concept ArgFits = [] {
  using T = typename Param::element_type;
  using A = std::remove_cvref_t<C>;
  if constexpr (PointerElement<T>) {
    using E = typename T::pointee;
    return std::is_null_pointer_v<A> || PointerTo<std::decay_t<A>, E> || ContiguousOf<A, E> || TensorLike<A> ||
           DescribedTensor<A>;
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
    throw LaunchError(argument_label(index) + " is a tensor of " + std::to_string(numel) +
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
    else if constexpr (std::is_array_v<A>)
      return ArgValue::pointer(erase_const(c), pointee, sizeof(A), MemoryPlace::Host, -1);
    else if constexpr (DescribedTensor<A>) {
      const TensorDescription t = TensorArgument<A>::describe(c, I);
      return ArgValue::pointer(t.data, t.dtype, t.bytes, t.place, t.device);
    } else if constexpr (std::is_pointer_v<A>) return ArgValue::pointer(erase_const(c), pointee);
    else if constexpr (ContiguousOf<A, E>) {
      ArgValue a = ArgValue::pointer(erase_const(c.data()), pointee, c.size() * sizeof(E));
      if constexpr (is_host_container<A>) a.place = MemoryPlace::Host;
      if constexpr (requires { { c.memory_place() } -> std::same_as<MemoryPlace>; }) {
        a.place = c.memory_place();
        a.device = c.device();
      }
      return a;
    } else return ArgValue::pointer(erase_const(c.data_ptr()), pointee, tensor_bytes<E>(I, c.numel()));
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

// ts::tensor_args<R>(t): the tensor, then its R sizes, then its R strides (in elements).
template <class A, int Rank>
struct TensorWithShape {
  std::conditional_t<std::is_pointer_v<A>, A, const A&> tensor;  // a pointer is kept, not referred to
};

// The launch arguments one C++ argument stands for: itself, or a tensor and its sizes and strides.
template <class T>
inline constexpr bool is_tensor_with_shape = false;
template <class A, int Rank>
inline constexpr bool is_tensor_with_shape<TensorWithShape<A, Rank>> = true;

template <class A>
  requires(!is_tensor_with_shape<std::remove_cv_t<A>>)
auto launch_parts(A& arg) {
  return std::forward_as_tuple(arg);
}
template <class A, int Rank>
auto launch_parts(const TensorWithShape<A, Rank>& v) {
  static_assert(DescribedTensor<A>, "ts::tensor_args takes a tensor that says its shape (a DLPack tensor, at::Tensor)");
  const TensorDescription t = TensorArgument<A>::describe(v.tensor, no_argument_index);
  if (t.rank != Rank)
    throw LaunchError("ts::tensor_args<" + std::to_string(Rank) + ">: the tensor has " + std::to_string(t.rank) +
                      " dimensions");
  tensor_extent(no_argument_index, Rank, t.shape, t.strides);  // refuses negative or overflowing sizes first
  std::array<std::int64_t, 2 * Rank> dims{};
  std::int64_t compact = 1;
  for (int d = Rank - 1; d >= 0; --d) {
    dims[d] = t.shape[d];
    dims[Rank + d] = t.strides != nullptr ? t.strides[d] : compact;
    compact *= t.shape[d];
  }
  return std::tuple_cat(std::forward_as_tuple(v.tensor), std::tuple_cat(dims));
}

}  // namespace tessera::detail

namespace tessera {
// Passes a tensor and, as the next 2 * Rank integer parameters of the kernel, its sizes and its
// strides in elements (a compact tensor's row-major strides where it has none):
//   k[opts](ts::tensor_args<2>(x), out, n)   for   (Ptr<float> x, Int64 rows, Int64 cols,
//                                                    Int64 row_stride, Int64 col_stride, ...)
template <int Rank, class A>
detail::TensorWithShape<std::remove_cvref_t<A>, Rank> tensor_args(const A& tensor) {
  static_assert(Rank >= 1, "ts::tensor_args<Rank>: Rank is at least 1");
  return {tensor};
}
}  // namespace tessera

// Reductions and scans along an axis (Triton's tl.sum / tl.max / tl.reduce / tl.cumsum /
// tl.associative_scan). A reduction removes the axis (a 1-D tile reduces to a scalar); a scan keeps
// the shape. A user combine function takes two scalar tiles and returns their combination; it is
// traced once into the op's region and must be associative (and, for reduce, commutative).
#pragma once
#include <cstddef>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/tile.hpp"

namespace tessera {
namespace detail {
using Combine = std::function<std::vector<ir::Value*>(const std::vector<ir::Value*>& lhs,
                                                      const std::vector<ir::Value*>& rhs)>;
// Emits reduce (scan = false) or scan over `inputs` (same shape) along `axis`.
TESSERA_API std::vector<ir::Value*> trace_reduce(const std::vector<ir::Value*>& inputs, int axis, bool scan,
                                                 bool reverse, const Combine& combine, const Loc& loc);

// Result types as Triton 3.6's (standard.py): sum and cumsum of an integer type narrower than 32
// bits in i32, or u32 when it is unsigned or bool (Triton's int1 is unsigned; _pick_sum_dtype);
// cumsum and cumprod of bf16 in f32 (_promote_bfloat16_to_float32); max and min of anything
// narrower than 32 bits in f32 (floats) or i32 (ints). A `dtype` argument (ts::as<T>) sets the
// type instead, as Triton's dtype=.
template <class T>
using sum_type = std::conditional_t<
    std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int16_t>, std::int32_t,
    std::conditional_t<std::is_same_v<T, bool> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t>,
                       std::uint32_t, T>>;
template <class T>
using scan_type = std::conditional_t<std::is_same_v<T, bfloat16>, float, T>;
template <class T>
using max_type = std::conditional_t<(bits_of(dtype_of<T>) < 32), std::conditional_t<FloatElement<T>, float, std::int32_t>, T>;
// f16 and bf16 add in f32 and round once at the end: within Triton's error bound (its partial sums
// round to f16 at every step), never further from the exact sum than Triton's.
template <class T>
using sum_accumulator = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;

// The sum of x along axis in type S (accumulated in sum_accumulator<S>), or its inclusive scan.
template <class S, class T>
Tile<S> sum_as(const Tile<T>& x, int axis, bool scan, bool reverse, const Loc& loc);

template <class T, class F>
Tile<T> reduce_with(const Tile<T>& x, int axis, bool scan, bool reverse, F&& f, const Loc& loc) {
  Combine c = [&](const std::vector<ir::Value*>& l, const std::vector<ir::Value*>& r) {
    Tile<T> out = f(Tile<T>(l[0], loc), Tile<T>(r[0], loc));
    return std::vector<ir::Value*>{out.ir_value(loc)};
  };
  return Tile<T>(trace_reduce({x.ir_value(loc)}, axis, scan, reverse, c, loc)[0], loc);
}
}  // namespace detail

// reduce(x, axis, f): f(Tile<T> a, Tile<T> b) -> Tile<T> on scalars.
template <class T, class F>
Tile<T> reduce(const Tile<T>& x, int axis, F&& f, const Loc& loc = Loc::current()) {
  static_assert(std::is_invocable_r_v<Tile<T>, F&, Tile<T>, Tile<T>>,
                "tessera::reduce: the combine function must take two Tile<T> and return a Tile<T>");
  return detail::reduce_with(x, axis, false, false, f, loc);
}

template <class T>
Tile<detail::sum_type<T>> sum(const Tile<T>& x, int axis, const Loc& loc = Loc::current()) {
  static_assert(Element<T>, "tessera::sum: needs a tile of numbers");
  return detail::sum_as<detail::sum_type<T>>(x, axis, false, false, loc);
}
// sum(x, axis, ts::as<D>): x converted to D, then summed (Triton's dtype=).
template <class T, class D>
Tile<D> sum(const Tile<T>& x, int axis, As<D>, const Loc& loc = Loc::current()) {
  static_assert(Element<T> && Element<D>, "tessera::sum: needs a tile of numbers and a number type");
  return detail::sum_as<D>(x, axis, false, false, loc);
}

namespace detail {
template <class T>
Tile<max_type<T>> max_or_min(const Tile<T>& x, int axis, BinOp op, const Loc& loc) {
  using M = max_type<T>;
  return reduce_with(x.template to<M>(loc), axis, false, false, [&](const Tile<M>& a, const Tile<M>& b) {
    return Tile<M>(emit_binary(op, a.ir_value(loc), b.ir_value(loc), dtype_of<M>, loc), loc);
  }, loc);
}
}  // namespace detail

template <class T>
Tile<detail::max_type<T>> max(const Tile<T>& x, int axis, const Loc& loc = Loc::current()) {
  static_assert(Element<T>, "tessera::max: needs a tile of numbers");
  return detail::max_or_min(x, axis, detail::BinOp::Max, loc);
}

template <class T>
Tile<detail::max_type<T>> min(const Tile<T>& x, int axis, const Loc& loc = Loc::current()) {
  static_assert(Element<T>, "tessera::min: needs a tile of numbers");
  return detail::max_or_min(x, axis, detail::BinOp::Min, loc);
}

namespace detail {
// argmax / argmin: reduce (value, index) pairs; ties keep the smaller index (as Triton).
TESSERA_API ir::Value* trace_arg_reduce(ir::Value* x, int axis, bool is_max, const Loc& loc);
}  // namespace detail

namespace detail {
// Several tiles reduced or scanned together (Triton's tl.reduce / tl.associative_scan over a
// tuple): f takes the left elements, then the right ones, as scalar tiles, and returns a
// std::tuple of the combined elements in the same order and types.
template <class... T, std::size_t... I, class F>
std::tuple<Tile<T>...> reduce_tuple_with(const std::tuple<Tile<T>...>& xs, int axis, bool scan, bool reverse, F& f,
                                         std::index_sequence<I...>, const Loc& loc) {
  Combine c = [&](const std::vector<ir::Value*>& l, const std::vector<ir::Value*>& r) {
    std::tuple<Tile<T>...> out = f(Tile<T>(l[I], loc)..., Tile<T>(r[I], loc)...);
    return std::vector<ir::Value*>{std::get<I>(out).ir_value(loc)...};
  };
  const std::vector<ir::Value*> results = trace_reduce({std::get<I>(xs).ir_value(loc)...}, axis, scan, reverse, c, loc);
  return std::tuple<Tile<T>...>(Tile<T>(results[I], loc)...);
}
}  // namespace detail

// reduce(std::tuple{x, y, ...}, axis, f): the tiles (one shape) reduced together along axis, as
// Triton's tl.reduce((x, y), axis, f): f(x1, y1, ..., x2, y2, ...) -> std::tuple{x, y, ...} on
// scalar tiles, associative and commutative (e.g. an argmax with its own tie rule).
template <class... T, class F>
std::tuple<Tile<T>...> reduce(const std::tuple<Tile<T>...>& xs, int axis, F&& f, const Loc& loc = Loc::current()) {
  static_assert(sizeof...(T) > 0, "tessera::reduce: needs at least one tile");
  static_assert(std::is_invocable_r_v<std::tuple<Tile<T>...>, F&, Tile<T>..., Tile<T>...>,
                "tessera::reduce over a tuple: the combine function must take the left elements, then the right ones "
                "(Tile<T> each), and return a std::tuple of Tile<T> in the same order");
  return detail::reduce_tuple_with(xs, axis, false, false, f, std::index_sequence_for<T...>{}, loc);
}

// associative_scan(std::tuple{x, y, ...}, axis, f, reverse): the inclusive scan of several tiles
// together, as Triton's tl.associative_scan((x, y), axis, f, reverse) (a linear recurrence
// h = a*h + b is the scan of (a, b) pairs); f as for reduce over a tuple, associative.
template <class... T, class F>
std::tuple<Tile<T>...> associative_scan(const std::tuple<Tile<T>...>& xs, int axis, F&& f, bool reverse = false,
                                        const Loc& loc = Loc::current()) {
  static_assert(sizeof...(T) > 0, "tessera::associative_scan: needs at least one tile");
  static_assert(std::is_invocable_r_v<std::tuple<Tile<T>...>, F&, Tile<T>..., Tile<T>...>,
                "tessera::associative_scan over a tuple: the combine function must take the left elements, then the "
                "right ones (Tile<T> each), and return a std::tuple of Tile<T> in the same order");
  return detail::reduce_tuple_with(xs, axis, true, reverse, f, std::index_sequence_for<T...>{}, loc);
}

template <class T>
Tile<std::int32_t> argmax(const Tile<T>& x, int axis, const Loc& loc = Loc::current()) {
  static_assert(Element<T>, "tessera::argmax: needs a tile of numbers");
  return Tile<std::int32_t>(detail::trace_arg_reduce(x.ir_value(loc), axis, true, loc), loc);
}
template <class T>
Tile<std::int32_t> argmin(const Tile<T>& x, int axis, const Loc& loc = Loc::current()) {
  static_assert(Element<T>, "tessera::argmin: needs a tile of numbers");
  return Tile<std::int32_t>(detail::trace_arg_reduce(x.ir_value(loc), axis, false, loc), loc);
}

// associative_scan(x, axis, f, reverse): inclusive scan with a user combine.
template <class T, class F>
Tile<T> associative_scan(const Tile<T>& x, int axis, F&& f, bool reverse = false, const Loc& loc = Loc::current()) {
  static_assert(std::is_invocable_r_v<Tile<T>, F&, Tile<T>, Tile<T>>,
                "tessera::associative_scan: the combine function must take two Tile<T> and return a Tile<T>");
  return detail::reduce_with(x, axis, true, reverse, f, loc);
}

template <class T>
Tile<detail::sum_type<detail::scan_type<T>>> cumsum(const Tile<T>& x, int axis, bool reverse = false,
                                                    const Loc& loc = Loc::current()) {
  return detail::sum_as<detail::sum_type<detail::scan_type<T>>>(x, axis, true, reverse, loc);
}
template <class T, class D>
Tile<D> cumsum(const Tile<T>& x, int axis, bool reverse, As<D>, const Loc& loc = Loc::current()) {
  return detail::sum_as<D>(x, axis, true, reverse, loc);
}

template <class T>
Tile<detail::scan_type<T>> cumprod(const Tile<T>& x, int axis, bool reverse = false, const Loc& loc = Loc::current()) {
  using A = detail::scan_type<T>;
  return detail::reduce_with(x.template to<A>(loc), axis, true, reverse, [&](const Tile<A>& a, const Tile<A>& b) {
    return Tile<A>(detail::emit_binary(detail::BinOp::Mul, a.ir_value(loc), b.ir_value(loc), dtype_of<A>, loc), loc);
  }, loc);
}

namespace detail {
template <class S, class T>
Tile<S> sum_as(const Tile<T>& x, int axis, bool scan, bool reverse, const Loc& loc) {
  using A = sum_accumulator<S>;
  const Tile<A> total = reduce_with(x.template to<A>(loc), axis, scan, reverse, [&](const Tile<A>& a, const Tile<A>& b) {
    return Tile<A>(emit_binary(BinOp::Add, a.ir_value(loc), b.ir_value(loc), dtype_of<A>, loc), loc);
  }, loc);
  return total.template to<S>(loc);
}
}  // namespace detail

}  // namespace tessera

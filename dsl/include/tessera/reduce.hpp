// Reductions and scans along an axis (Triton's tl.sum / tl.max / tl.reduce / tl.cumsum /
// tl.associative_scan). A reduction removes the axis (a 1-D tile reduces to a scalar); a scan keeps
// the shape. A user combine function takes two scalar tiles and returns their combination; it is
// traced once into the op's region and must be associative (and, for reduce, commutative).
#pragma once
#include <functional>
#include <type_traits>
#include <vector>

#include "tessera/tile.hpp"

namespace tessera {
namespace detail {
using Combine = std::function<std::vector<ir::Value*>(const std::vector<ir::Value*>& lhs,
                                                      const std::vector<ir::Value*>& rhs)>;
// Emits reduce (scan = false) or scan over `inputs` (same shape) along `axis`.
TESSERA_API std::vector<ir::Value*> trace_reduce(const std::vector<ir::Value*>& inputs, int axis, bool scan,
                                                 bool reverse, const Combine& combine, const Loc& loc);

// Accumulation types: sub-32-bit floats sum in f32 and sub-32-bit ints in i32. Triton 3.6 keeps
// f16/bf16 sums in their type and sums unsigned small ints in u32: departures, which
// tests/conformance asserts and lists.
template <class T>
using sum_type = std::conditional_t<
    std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float,
    std::conditional_t<std::is_same_v<T, bool> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int16_t> ||
                           std::is_same_v<T, std::uint8_t>,
                       std::int32_t, T>>;

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
auto sum(const Tile<T>& x, int axis, const Loc& loc = Loc::current()) {
  static_assert(Element<T>, "tessera::sum: needs a tile of numbers");
  using A = detail::sum_type<T>;
  Tile<A> widened = x.template to<A>(loc);
  return detail::reduce_with(widened, axis, false, false, [&](const Tile<A>& a, const Tile<A>& b) { return Tile<A>(detail::emit_binary(detail::BinOp::Add, a.ir_value(loc), b.ir_value(loc), dtype_of<A>, loc), loc); }, loc);
}

template <class T>
Tile<T> max(const Tile<T>& x, int axis, const Loc& loc = Loc::current()) {
  static_assert(Element<T>, "tessera::max: needs a tile of numbers");
  return detail::reduce_with(x, axis, false, false, [&](const Tile<T>& a, const Tile<T>& b) { return Tile<T>(detail::emit_binary(detail::BinOp::Max, a.ir_value(loc), b.ir_value(loc), dtype_of<T>, loc), loc); }, loc);
}

template <class T>
Tile<T> min(const Tile<T>& x, int axis, const Loc& loc = Loc::current()) {
  static_assert(Element<T>, "tessera::min: needs a tile of numbers");
  return detail::reduce_with(x, axis, false, false, [&](const Tile<T>& a, const Tile<T>& b) { return Tile<T>(detail::emit_binary(detail::BinOp::Min, a.ir_value(loc), b.ir_value(loc), dtype_of<T>, loc), loc); }, loc);
}

namespace detail {
// argmax / argmin: reduce (value, index) pairs; ties keep the smaller index (as Triton).
TESSERA_API ir::Value* trace_arg_reduce(ir::Value* x, int axis, bool is_max, const Loc& loc);
}  // namespace detail

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
auto cumsum(const Tile<T>& x, int axis, bool reverse = false, const Loc& loc = Loc::current()) {
  using A = detail::sum_type<T>;
  Tile<A> widened = x.template to<A>(loc);
  return detail::reduce_with(widened, axis, true, reverse, [&](const Tile<A>& a, const Tile<A>& b) { return Tile<A>(detail::emit_binary(detail::BinOp::Add, a.ir_value(loc), b.ir_value(loc), dtype_of<A>, loc), loc); }, loc);
}

template <class T>
auto cumprod(const Tile<T>& x, int axis, bool reverse = false, const Loc& loc = Loc::current()) {
  using A = detail::sum_type<T>;
  Tile<A> widened = x.template to<A>(loc);
  return detail::reduce_with(widened, axis, true, reverse, [&](const Tile<A>& a, const Tile<A>& b) { return Tile<A>(detail::emit_binary(detail::BinOp::Mul, a.ir_value(loc), b.ir_value(loc), dtype_of<A>, loc), loc); }, loc);
}

}  // namespace tessera

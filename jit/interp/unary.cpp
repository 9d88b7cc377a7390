// Unary ops and cast: one tight loop per op over the whole tile.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "jit/interp/convert.hpp"
#include "jit/interp/ops.hpp"

namespace tessera::interp {
namespace {
using ir::OpKind;

// out[i] = fn(a[i]) in the compute type; `From` and `To` storage may differ (cast).
template <class From, class To, class Fn>
void map_elems(const Tile& a, Tile& out, Fn fn) {
  const From* x = a.data<From>();
  To* o = out.data<To>();
  const std::int64_t n = out.numel();
  for (std::int64_t i = 0; i < n; ++i) o[i] = fn(x[i]);
}

// A float downcast toward zero: the nearest value, then, when that is farther from zero than x,
// its neighbour toward zero (one less in the magnitude's bits: the finite floats of one sign are
// ordered as their bits). Beyond the largest finite value this gives that value; NaN stays NaN.
template <class To, class From>
To cast_toward_zero(From x) {
  if constexpr (is_fp8_storage_v<To>) {
    // fp8 saturates (ops.def): its codec truncates and clamps in one step.
    return f8_from_double<To>(static_cast<double>(to_compute(x)), /*toward_zero=*/true);
  } else {
    const To nearest = cast_elem<To>(x);
    const double wide = static_cast<double>(to_compute(x)), narrow = static_cast<double>(to_compute(nearest));
    if (!(std::fabs(narrow) > std::fabs(wide))) return nearest;  // NaN compares false
    using Bits = std::conditional_t<sizeof(To) == 2, std::uint16_t, std::uint32_t>;
    static_assert(sizeof(To) == sizeof(Bits), "downcasts give 16- or 32-bit floats");
    Bits bits;
    std::memcpy(&bits, &nearest, sizeof bits);
    --bits;
    To out;
    std::memcpy(&out, &bits, sizeof out);
    return out;
  }
}

template <class T>
void int_unary(const ir::Op& op, const Tile& a, Tile& out) {
  using W = std::conditional_t<(sizeof(T) <= 4), std::uint32_t, std::uint64_t>;
  switch (op.kind) {
    case OpKind::Neg: return map_elems<T, T>(a, out, [](T x) { return T(W(0) - W(x)); });
    case OpKind::Not: return map_elems<T, T>(a, out, [](T x) { return T(~x); });
    case OpKind::Abs:
      if constexpr (std::is_signed_v<T>)
        return map_elems<T, T>(a, out, [](T x) { return x < 0 ? T(W(0) - W(x)) : x; });  // INT_MIN stays
      else
        return map_elems<T, T>(a, out, [](T x) { return x; });
    default:
      internal_error(op, fmt::format("'{}' is defined on floats only, not on {}", op.name(),
                                     ir::dtype_name(out.dtype())));
  }
}

template <class T>
void float_unary(const ir::Op& op, const Tile& a, Tile& out) {
  using C = compute_t<T>;
  auto apply = [&](auto fn) {
    map_elems<T, T>(a, out, [fn](T x) { return from_compute<T>(C(fn(to_compute(x)))); });
  };
  switch (op.kind) {
    case OpKind::Neg: return apply([](C x) { return -x; });
    case OpKind::Exp: return apply([](C x) { return std::exp(x); });
    case OpKind::Log: return apply([](C x) { return std::log(x); });
    case OpKind::Sqrt: return apply([](C x) { return std::sqrt(x); });
    case OpKind::Abs: return apply([](C x) { return std::fabs(x); });
    default:
      internal_error(op, fmt::format("'{}' is defined on integers only, not on {}", op.name(),
                                     ir::dtype_name(out.dtype())));
  }
}

}  // namespace

Tile eval_unary(const ir::Op& op, const Tile& a_in) {
  const ir::Type& rt = op.result()->type;
  if (a_in.dtype() != rt.dtype) internal_error(op, "result type differs from the operand's type");
  if (rt.dtype == DType::Ptr) internal_error(op, "arithmetic on pointers");
  Tile scratch;
  const Tile& a = as_shape(a_in, rt.shape, scratch, op);
  Tile out(rt);
  visit_dtype(rt.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_storage_v<T>)
      float_unary<T>(op, a, out);
    else
      int_unary<T>(op, a, out);
  });
  if (rt.dtype == DType::I1) {  // i1 in a byte: `not` is logical, neg of a 1-bit value is itself
    auto* p = out.data<std::uint8_t>();
    for (std::int64_t i = 0; i < out.numel(); ++i) p[i] &= 1;
  }
  return out;
}

Tile eval_cast(const ir::Op& op, const Tile& a_in) {
  const ir::Type& rt = op.result()->type;
  Tile scratch;
  const Tile& a = as_shape(a_in, rt.shape, scratch, op);
  Tile out(rt);
  visit_dtype(a.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    if (rt.dtype == DType::I1) {  // x != 0 (NaN != 0 too); i1 shares u8's storage, so it is special
      return map_elems<From, std::uint8_t>(a, out, [](From x) -> std::uint8_t { return to_compute(x) != 0; });
    }
    // Pointers convert to and from integers as addresses; a float has no address.
    if ((rt.dtype == DType::Ptr && ir::is_float(a.dtype())) || (a.dtype() == DType::Ptr && ir::is_float(rt.dtype)))
      internal_error(op, fmt::format("cast between {} and {}", ir::dtype_name(a.dtype()), ir::dtype_name(rt.dtype)));
    const bool toward_zero = op.has_attr("rounding");  // "rtz", on float downcasts only (verifier)
    visit_dtype(rt.dtype, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      if constexpr (is_float_storage_v<From> && is_float_storage_v<To> && sizeof(To) < sizeof(From)) {
        if (toward_zero) return map_elems<From, To>(a, out, [](From x) { return cast_toward_zero<To>(x); });
      }
      map_elems<From, To>(a, out, [](From x) { return cast_elem<To>(x); });
    });
  });
  return out;
}

Tile eval_bitcast(const ir::Op& op, const Tile& a) {
  const ir::Type& rt = op.result()->type;
  Tile out(rt);
  if (a.numel() != out.numel() || a.elem_bytes() != out.elem_bytes())
    internal_error(op, fmt::format("bitcast of {} x {} bytes to {} x {} bytes", a.numel(), a.elem_bytes(), out.numel(),
                                   out.elem_bytes()));
  std::memcpy(out.raw(), a.raw(), static_cast<std::size_t>(a.numel() * a.elem_bytes()));
  return out;
}

}  // namespace tessera::interp

// Binary and compare ops: one tight loop per op over the whole tile.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "jit/interp/ops.hpp"

namespace tessera::interp {
namespace {
using ir::OpKind;

// out[i] = fn(a[i], b[i]), computed in the element's compute type (f16/bf16 round after each op).
template <class T, class Fn>
void zip(const Tile& a, const Tile& b, Tile& out, Fn fn) {
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* o = out.data<T>();
  const std::int64_t n = out.numel();
  for (std::int64_t i = 0; i < n; ++i) o[i] = from_compute<T>(fn(to_compute(x[i]), to_compute(y[i])));
}

template <class T>
void int_binary(const ir::Op& op, int bits, const Tile& a, const Tile& b, Tile& out) {
  // Arithmetic in an unsigned type at least as wide as int, so that it wraps instead of
  // overflowing (a uint16 product would promote to a signed int and overflow).
  using W = std::conditional_t<(sizeof(T) <= 4), std::uint32_t, std::uint64_t>;
  constexpr bool is_signed = std::is_signed_v<T>;
  const W shift_mod = static_cast<W>(bits);
  switch (op.kind) {
    case OpKind::Add: return zip<T>(a, b, out, [](T x, T y) { return T(W(x) + W(y)); });
    case OpKind::Sub: return zip<T>(a, b, out, [](T x, T y) { return T(W(x) - W(y)); });
    case OpKind::Mul: return zip<T>(a, b, out, [](T x, T y) { return T(W(x) * W(y)); });
    case OpKind::Div:
      return zip<T>(a, b, out, [](T x, T y) {
        if (y == 0) return T(~W(0));  // all ones, as NVIDIA hardware gives
        if constexpr (is_signed)
          if (x == std::numeric_limits<T>::min() && y == T(-1)) return x;  // wraps
        return T(x / y);
      });
    case OpKind::Rem:
      return zip<T>(a, b, out, [](T x, T y) {
        if (y == 0) return x;
        if constexpr (is_signed)
          if (y == T(-1)) return T(0);  // INT_MIN % -1 would trap in C++
        return T(x % y);
      });
    case OpKind::And: return zip<T>(a, b, out, [](T x, T y) { return T(x & y); });
    case OpKind::Or: return zip<T>(a, b, out, [](T x, T y) { return T(x | y); });
    case OpKind::Xor: return zip<T>(a, b, out, [](T x, T y) { return T(x ^ y); });
    case OpKind::Shl:
      return zip<T>(a, b, out, [shift_mod](T x, T y) { return T(W(x) << (W(y) % shift_mod)); });
    case OpKind::Shr:  // arithmetic for signed T (C++20 defines >> on negatives), logical otherwise
      return zip<T>(a, b, out, [shift_mod](T x, T y) { return T(x >> (W(y) % shift_mod)); });
    case OpKind::Min: return zip<T>(a, b, out, [](T x, T y) { return std::min(x, y); });
    case OpKind::Max: return zip<T>(a, b, out, [](T x, T y) { return std::max(x, y); });
    default: internal_error(op, "not a binary op");
  }
}

template <class T>
void float_binary(const ir::Op& op, const Tile& a, const Tile& b, Tile& out) {
  using C = compute_t<T>;
  switch (op.kind) {
    case OpKind::Add: return zip<T>(a, b, out, [](C x, C y) { return C(x + y); });
    case OpKind::Sub: return zip<T>(a, b, out, [](C x, C y) { return C(x - y); });
    case OpKind::Mul: return zip<T>(a, b, out, [](C x, C y) { return C(x * y); });
    case OpKind::Div: return zip<T>(a, b, out, [](C x, C y) { return C(x / y); });
    case OpKind::Rem: return zip<T>(a, b, out, [](C x, C y) { return C(std::fmod(x, y)); });
    case OpKind::Min: return zip<T>(a, b, out, [](C x, C y) { return C(std::fmin(x, y)); });
    case OpKind::Max: return zip<T>(a, b, out, [](C x, C y) { return C(std::fmax(x, y)); });
    default:
      internal_error(op, fmt::format("'{}' is defined on integers only, not on {}", op.name(),
                                     ir::dtype_name(out.dtype())));
  }
}

// i1 lives in a byte: keep it 0 or 1 after arithmetic that may carry into bit 1.
void normalize_i1(Tile& t) {
  auto* p = t.data<std::uint8_t>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] &= 1;
}

template <class T, class Fn>
void compare_loop(const Tile& a, const Tile& b, Tile& out, Fn fn) {
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  auto* o = out.data<std::uint8_t>();
  const std::int64_t n = out.numel();
  for (std::int64_t i = 0; i < n; ++i) o[i] = fn(to_compute(x[i]), to_compute(y[i])) ? 1 : 0;
}

// The built-in operators are exactly the semantics asked for: signedness from the storage type,
// ordered float compares, and != unordered (true when either side is NaN).
template <class T>
void compare(const ir::Op& op, const Tile& a, const Tile& b, Tile& out) {
  using C = compute_t<T>;
  switch (op.kind) {
    case OpKind::CmpEq: return compare_loop<T>(a, b, out, [](C x, C y) { return x == y; });
    case OpKind::CmpNe: return compare_loop<T>(a, b, out, [](C x, C y) { return x != y; });
    case OpKind::CmpLt: return compare_loop<T>(a, b, out, [](C x, C y) { return x < y; });
    case OpKind::CmpLe: return compare_loop<T>(a, b, out, [](C x, C y) { return x <= y; });
    case OpKind::CmpGt: return compare_loop<T>(a, b, out, [](C x, C y) { return x > y; });
    case OpKind::CmpGe: return compare_loop<T>(a, b, out, [](C x, C y) { return x >= y; });
    default: internal_error(op, "not a compare op");
  }
}

void check_same_dtype(const ir::Op& op, const Tile& a, const Tile& b) {
  if (a.dtype() != b.dtype())
    internal_error(op, fmt::format("operands of different types {} and {}", ir::dtype_name(a.dtype()),
                                   ir::dtype_name(b.dtype())));
}

}  // namespace

Tile eval_binary(const ir::Op& op, const Tile& a_in, const Tile& b_in) {
  const ir::Type& rt = op.result()->type;
  check_same_dtype(op, a_in, b_in);
  if (a_in.dtype() != rt.dtype) internal_error(op, "result type differs from the operands' type");
  if (rt.dtype == DType::Ptr) internal_error(op, "arithmetic on pointers (use addptr)");
  Tile sa, sb;
  const Tile& a = as_shape(a_in, rt.shape, sa, op);
  const Tile& b = as_shape(b_in, rt.shape, sb, op);
  Tile out(rt);
  visit_dtype(rt.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_storage_v<T>)
      float_binary<T>(op, a, b, out);
    else
      int_binary<T>(op, ir::dtype_bits(rt.dtype), a, b, out);
  });
  if (rt.dtype == DType::I1) normalize_i1(out);
  return out;
}

Tile eval_compare(const ir::Op& op, const Tile& a_in, const Tile& b_in) {
  const ir::Type& rt = op.result()->type;
  check_same_dtype(op, a_in, b_in);
  if (rt.dtype != DType::I1) internal_error(op, "a compare must give i1");
  Tile sa, sb;
  const Tile& a = as_shape(a_in, rt.shape, sa, op);
  const Tile& b = as_shape(b_in, rt.shape, sb, op);
  Tile out(rt);
  visit_dtype(a.dtype(), [&](auto tag) { compare<typename decltype(tag)::type>(op, a, b, out); });
  return out;
}

}  // namespace tessera::interp

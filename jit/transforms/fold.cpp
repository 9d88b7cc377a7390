#include "jit/transforms/fold.hpp"

#include <cmath>
#include <limits>

namespace tessera::transforms {
using ir::Attr;
using ir::DType;
using ir::OpKind;

std::int64_t normalize_int(DType d, std::int64_t v) {
  int bits = ir::dtype_bits(d);
  if (bits >= 64) return v;
  auto u = static_cast<std::uint64_t>(v) & ((std::uint64_t{1} << bits) - 1);
  if (!ir::is_unsigned(d) && (u >> (bits - 1)) != 0) u |= ~((std::uint64_t{1} << bits) - 1);
  return static_cast<std::int64_t>(u);
}

double round_to_dtype(DType d, double v) {
  if (d == DType::F64) return v;
  if (d == DType::F32) return static_cast<double>(static_cast<float>(v));  // IEEE conversion: RNE
  if (!std::isfinite(v) || v == 0) return v;
  // f16: 11 significant bits, normal exponents from -14; bf16: 8 bits, from -126.
  const int precision = d == DType::F16 ? 11 : 8;
  const int min_exp = d == DType::F16 ? -14 : -126;
  const double max_finite = d == DType::F16 ? 65504.0 : 3.3895313892515355e38;
  int e = 0;
  std::frexp(v, &e);  // |v| in [2^(e-1), 2^e)
  double ulp = std::ldexp(1.0, std::max(e - 1, min_exp) - (precision - 1));
  double r = std::nearbyint(v / ulp) * ulp;  // exact scaling; nearbyint rounds to nearest even
  if (std::fabs(r) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return r;
}

namespace {

std::optional<std::int64_t> int_div(DType d, std::int64_t a, std::int64_t b, bool rem) {
  if (b == 0) return rem ? a : normalize_int(d, -1);  // NVIDIA hardware: x/0 = all ones, x%0 = x
  if (a == std::numeric_limits<std::int64_t>::min() && b == -1) return rem ? 0 : a;  // i64 wraps
  return normalize_int(d, rem ? a % b : a / b);  // normalized unsigned values are non-negative
}

std::optional<std::int64_t> int_binary(OpKind k, DType d, std::int64_t a, std::int64_t b) {
  // u64 values above 2^63 are negative int64s here: the ops that read the sign are left alone.
  if (d == DType::U64 && (k == OpKind::Div || k == OpKind::Rem || k == OpKind::Min || k == OpKind::Max))
    return std::nullopt;
  auto ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
  unsigned bits = static_cast<unsigned>(ir::dtype_bits(d));
  unsigned shift = static_cast<unsigned>(ub % bits);
  switch (k) {
    case OpKind::Add: return normalize_int(d, static_cast<std::int64_t>(ua + ub));
    case OpKind::Sub: return normalize_int(d, static_cast<std::int64_t>(ua - ub));
    case OpKind::Mul: return normalize_int(d, static_cast<std::int64_t>(ua * ub));
    case OpKind::Div: return int_div(d, a, b, false);
    case OpKind::Rem: return int_div(d, a, b, true);
    case OpKind::And: return a & b;
    case OpKind::Or: return a | b;
    case OpKind::Xor: return a ^ b;
    case OpKind::Shl: return normalize_int(d, static_cast<std::int64_t>(ua << shift));
    // Normalized signed values are sign-extended and unsigned ones zero-extended, so an int64
    // arithmetic shift is the signed shr and an unsigned one the logical shr.
    case OpKind::Shr: return ir::is_unsigned(d) ? static_cast<std::int64_t>(ua >> shift) : a >> shift;
    case OpKind::Min: return std::min(a, b);
    case OpKind::Max: return std::max(a, b);
    default: return std::nullopt;
  }
}

std::optional<double> float_binary(OpKind k, DType d, double a, double b) {
  switch (k) {
    case OpKind::Add: return round_to_dtype(d, a + b);
    case OpKind::Sub: return round_to_dtype(d, a - b);
    case OpKind::Mul: return round_to_dtype(d, a * b);
    case OpKind::Div: return round_to_dtype(d, a / b);
    case OpKind::Rem: return std::fmod(a, b);  // exact
    case OpKind::Min:
    case OpKind::Max:
      if (a == 0 && b == 0 && std::signbit(a) != std::signbit(b)) return std::nullopt;
      return k == OpKind::Min ? std::fmin(a, b) : std::fmax(a, b);  // a NaN yields the other
    default: return std::nullopt;
  }
}

template <class T>
bool compare(OpKind k, T a, T b) {
  switch (k) {
    case OpKind::CmpEq: return a == b;
    case OpKind::CmpNe: return a != b;  // unordered: true when a NaN is involved
    case OpKind::CmpLt: return a < b;
    case OpKind::CmpLe: return a <= b;
    case OpKind::CmpGt: return a > b;
    default: return a >= b;
  }
}

std::int64_t float_to_int(DType to, double v) {
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  int bits = ir::dtype_bits(to);
  double lo = ir::is_unsigned(to) ? 0.0 : -std::ldexp(1.0, bits - 1);
  double hi_excl = ir::is_unsigned(to) ? std::ldexp(1.0, bits) : std::ldexp(1.0, bits - 1);
  if (t < lo) return static_cast<std::int64_t>(lo);
  if (t >= hi_excl) return bits >= 64 ? std::numeric_limits<std::int64_t>::max()
                                      : static_cast<std::int64_t>(hi_excl) - 1;
  return static_cast<std::int64_t>(t);
}

}  // namespace

// fp8 is not folded: its rounding lives in tessera/float8.hpp and the lowering, not here.
std::optional<Attr> fold_unary(OpKind k, DType d, const Attr& a) {
  if (ir::is_fp8(d)) return std::nullopt;
  if (auto* i = std::get_if<std::int64_t>(&a); i && ir::is_int(d)) {
    switch (k) {
      case OpKind::Neg: return normalize_int(d, static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(*i)));
      case OpKind::Not: return normalize_int(d, ~*i);
      case OpKind::Abs:  // u64 values above 2^63 are stored as negative int64s: abs of unsigned is x
        return *i < 0 && !ir::is_unsigned(d) ? normalize_int(d, static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(*i))) : *i;
      default: return std::nullopt;
    }
  }
  if (auto* f = std::get_if<double>(&a); f && ir::is_float(d)) {
    if (k == OpKind::Neg) return -round_to_dtype(d, *f);
    if (k == OpKind::Abs) return std::fabs(round_to_dtype(d, *f));
    // floor/ceil are exact in every float type; the other math ops are not folded, since the
    // device's result may differ from the host's libm in the last bits.
    if (k == OpKind::Floor) return std::floor(round_to_dtype(d, *f));
    if (k == OpKind::Ceil) return std::ceil(round_to_dtype(d, *f));
  }
  return std::nullopt;
}

std::optional<Attr> fold_binary(OpKind k, DType d, const Attr& a, const Attr& b) {
  if (ir::is_fp8(d)) return std::nullopt;
  auto *ia = std::get_if<std::int64_t>(&a), *ib = std::get_if<std::int64_t>(&b);
  if (ia && ib && ir::is_int(d)) {
    if (auto r = int_binary(k, d, *ia, *ib)) return *r;
    return std::nullopt;
  }
  auto *fa = std::get_if<double>(&a), *fb = std::get_if<double>(&b);
  if (fa && fb && ir::is_float(d)) {
    if (auto r = float_binary(k, d, round_to_dtype(d, *fa), round_to_dtype(d, *fb))) return *r;
  }
  return std::nullopt;
}

std::optional<Attr> fold_compare(OpKind k, DType d, const Attr& a, const Attr& b) {
  if (ir::is_fp8(d) || d == DType::U64) return std::nullopt;
  auto *ia = std::get_if<std::int64_t>(&a), *ib = std::get_if<std::int64_t>(&b);
  if (ia && ib && ir::is_int(d)) return std::int64_t{compare(k, *ia, *ib)};  // normalized: see header
  auto *fa = std::get_if<double>(&a), *fb = std::get_if<double>(&b);
  if (fa && fb && ir::is_float(d)) return std::int64_t{compare(k, round_to_dtype(d, *fa), round_to_dtype(d, *fb))};
  return std::nullopt;
}

std::optional<Attr> fold_cast(DType from, DType to, const Attr& a) {
  if (from == DType::Ptr || to == DType::Ptr || ir::is_fp8(from) || ir::is_fp8(to)) return std::nullopt;
  if ((from == DType::U64 && ir::is_float(to)) || (to == DType::U64 && ir::is_float(from))) return std::nullopt;
  if (auto* i = std::get_if<std::int64_t>(&a); i && ir::is_int(from)) {
    if (to == DType::I1) return std::int64_t{*i != 0};
    if (ir::is_int(to)) return normalize_int(to, *i);
    constexpr std::int64_t exact = std::int64_t{1} << 53;  // beyond it the double would round twice
    if (*i > exact || *i < -exact) return std::nullopt;
    return round_to_dtype(to, static_cast<double>(*i));
  }
  if (auto* f = std::get_if<double>(&a); f && ir::is_float(from)) {
    double v = round_to_dtype(from, *f);
    if (ir::is_float(to)) return round_to_dtype(to, v);
    if (to == DType::I1) return std::nullopt;  // ops.def leaves float -> i1 open
    return float_to_int(to, v);
  }
  return std::nullopt;
}

}  // namespace tessera::transforms

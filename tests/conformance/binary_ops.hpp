// Binary operators on every pair of element types: + - * / % & | ^ << >> minimum maximum and the
// six comparisons, each launched once per (op, type pair) over the cross product of both types'
// edge values, against a host reference of Triton's semantics (python/triton/language/semantic.py:
// computation_type_impl, integer_promote_impl; IEEE-754 round to nearest even; C's truncating
// integer `/` and `%`, which is what Triton's `//` and `%` lower to: sdiv/srem, udiv/urem).
// Included by binary_*_test.cpp, which split the pairs so that the two halves compile in parallel.
#pragma once
#include "conformance.hpp"

namespace conf::binary {

enum Op : int { Add, Sub, Mul, Div, Rem, And, Or, Xor, Shl, Shr, Min, Max, MinNan, MaxNan, Eq, Ne, Lt, Le, Gt, Ge };
inline const char* op_name(int op) {
  static const char* names[] = {"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "minimum", "maximum",
                                "minimum(propagate_nan=all)", "maximum(propagate_nan=all)", "==", "!=", "<", "<=",
                                ">", ">="};
  return names[op];
}
inline bool is_compare(int op) { return op >= Eq; }
inline bool is_div_or_mod(int op) { return op == Div || op == Rem; }

// ---------------------------------------------------------------------------------------------
// Triton's type of a binary op on two tensors (computation_type_impl; integer_promote_impl),
// written from semantic.py, independent of tessera's promote(). nullopt: Triton raises.
struct TypeInfo {
  bool fp;
  int bits;
  bool is_unsigned;
  std::string name;
};
inline TypeInfo type_info(const std::string& n) {
  if (n == "f16" || n == "bf16") return {true, 16, false, n};
  if (n == "f32") return {true, 32, false, n};
  if (n == "f64") return {true, 64, false, n};
  const bool u = n[0] == 'u';
  return {false, std::stoi(n.substr(1)), u, n};
}
inline std::optional<std::string> triton_type(const std::string& an, const std::string& bn, bool div_or_mod) {
  const TypeInfo a = type_info(an), b = type_info(bn);
  if (an == "f64" || bn == "f64") return "f64";
  if (an == "f32" || bn == "f32") return "f32";
  if (an == "f16" || bn == "f16") return div_or_mod ? "f32" : "f16";
  if (an == "bf16" || bn == "bf16") {
    if (div_or_mod) return "f32";
    return an == "bf16" && bn == "bf16" ? "bf16" : "f32";
  }
  if (div_or_mod && a.is_unsigned != b.is_unsigned) return std::nullopt;
  if (a.is_unsigned == b.is_unsigned) return a.bits > b.bits ? an : bn;
  if (a.is_unsigned) return a.bits >= b.bits ? an : bn;
  return b.bits >= a.bits ? bn : an;
}

// ---------------------------------------------------------------------------------------------
// The host reference of each op in the computation type R (operands already cast to R).

// f16/bf16 arithmetic is computed in f32 and rounded once (README "Math"); for + - * / that equals
// the correctly rounded f16/bf16 result, since f32 has more than 2p+2 bits for p = 11 and 8. An
// f32 result is the double result rounded: double has more than 2*24+2 bits.
template <class R>
R float_arith(int op, R x, R y) {
  const double a = static_cast<double>(to_ld(x)), b = static_cast<double>(to_ld(y));
  double r = 0;
  switch (op) {
    case Add: r = a + b; break;
    case Sub: r = a - b; break;
    case Mul: r = a * b; break;
    case Div: r = a / b; break;
    case Rem: r = std::fmod(a, b); break;  // C's fmod, exact (Triton: frem)
    default: break;
  }
  if constexpr (std::is_same_v<R, double>) return r;
  else if constexpr (std::is_same_v<R, float>) return round_to<float>(r);
  else return round_to<R>(to_ld(round_to<float>(r)));
}

template <class R>
R int_arith(int op, R x, R y) {
  using U = std::uint64_t;  // wraparound arithmetic, then the modular conversion back to R
  switch (op) {
    case Add: return static_cast<R>(U(x) + U(y));
    case Sub: return static_cast<R>(U(x) - U(y));
    case Mul: return static_cast<R>(U(x) * U(y));
    case Div: return static_cast<R>(x / y);  // truncates toward zero (callers skip y == 0, MIN / -1)
    case Rem: return static_cast<R>(x % y);  // the sign of the dividend
    case And: return static_cast<R>(x & y);
    case Or: return static_cast<R>(x | y);
    case Xor: return static_cast<R>(x ^ y);
    case Shl: return static_cast<R>(U(x) << y);
    case Shr: return static_cast<R>(x >> y);  // arithmetic for signed R (C++20), logical for unsigned
    default: return R{};
  }
}

// minimum/maximum: Triton's default (propagate_nan=NONE) is minnum/maxnum: a NaN operand gives the
// other operand; `all` gives NaN if either is. The sign of a zero result is unspecified.
template <class R>
R min_max(int op, R x, R y) {
  const bool is_min = op == Min || op == MinNan;
  if constexpr (is_float_v<R>) {
    if (is_nan(x) || is_nan(y)) {
      if (op == MinNan || op == MaxNan || (is_nan(x) && is_nan(y))) return round_to<R>(NAN);
      return is_nan(x) ? y : x;
    }
    return (to_ld(x) < to_ld(y)) == is_min ? x : y;
  } else {
    return is_min ? std::min(x, y) : std::max(x, y);
  }
}

// Ordered comparisons (false with a NaN) except !=, which is true with a NaN (IEEE, as Triton's
// cmpf une / oXX).
template <class R>
bool compare(int op, R x, R y) {
  const long double a = to_ld(x), b = to_ld(y);
  switch (op) {
    case Eq: return a == b;
    case Ne: return a != b;
    case Lt: return a < b;
    case Le: return a <= b;
    case Gt: return a > b;
    default: return a >= b;
  }
}

// ---------------------------------------------------------------------------------------------
// The kernel: out = x OP y (or mask = x OP y as 0/1 bytes for a comparison), OP a meta-parameter.

// Whether tessera refuses x / y and x % y at compile time (ints of different signedness, as Triton).
template <class A, class B>
inline constexpr bool division_refused = ts::detail::mixed_signedness_division<ts::Tile<A>, ts::Tile<B>>;

template <class A, class B>
auto make_kernel() {
  using R = ts::promote_t<A, B>;
  using RD = ts::promote_t<A, B, true>;  // / and %
  return ts::kernel("conformance_binary", [](ts::Ptr<A> a, ts::Ptr<B> b, ts::Ptr<R> out, ts::Ptr<RD> outd,
                                             ts::Ptr<std::uint8_t> mask) {
    const std::int64_t block = ts::meta("BLOCK");
    const auto offs = ts::arange(0, block);
    const auto x = ts::load(a + offs);
    const auto y = ts::load(b + offs);
    constexpr bool ints = is_int_v<A> && is_int_v<B>;
    switch (static_cast<int>(ts::meta("OP"))) {
      case Add: ts::store(out + offs, x + y); break;
      case Sub: ts::store(out + offs, x - y); break;
      case Mul: ts::store(out + offs, x * y); break;
      case Div:
        if constexpr (!division_refused<A, B>) ts::store(outd + offs, x / y);
        break;
      case Rem:
        if constexpr (!division_refused<A, B>) ts::store(outd + offs, x % y);
        break;
      case Min: ts::store(out + offs, ts::minimum(x, y)); break;
      case Max: ts::store(out + offs, ts::maximum(x, y)); break;
      case Eq: ts::store(mask + offs, (x == y).template to<std::uint8_t>()); break;
      case Ne: ts::store(mask + offs, (x != y).template to<std::uint8_t>()); break;
      case Lt: ts::store(mask + offs, (x < y).template to<std::uint8_t>()); break;
      case Le: ts::store(mask + offs, (x <= y).template to<std::uint8_t>()); break;
      case Gt: ts::store(mask + offs, (x > y).template to<std::uint8_t>()); break;
      case Ge: ts::store(mask + offs, (x >= y).template to<std::uint8_t>()); break;
      default:
        if constexpr (ints) {
          switch (static_cast<int>(ts::meta("OP"))) {
            case And: ts::store(out + offs, x & y); break;
            case Or: ts::store(out + offs, x | y); break;
            case Xor: ts::store(out + offs, x ^ y); break;
            case Shl: ts::store(out + offs, x << y); break;
            case Shr: ts::store(out + offs, x >> y); break;
            default: break;
          }
        } else if constexpr (is_float_v<R>) {
          switch (static_cast<int>(ts::meta("OP"))) {
            case MinNan: ts::store(out + offs, ts::minimum(x, y, ts::PropagateNan::all)); break;
            case MaxNan: ts::store(out + offs, ts::maximum(x, y, ts::PropagateNan::all)); break;
            default: break;
          }
        }
    }
  });
}

// Runs `op` on the pairs (xs[i], ys[i]) and checks every element against the host reference; R is
// the op's result type (promote_t<A, B>, with div_or_mod for / and %), which must be Triton's.
template <class A, class B, class R, class K>
void run_op(K& kernel, int op, const std::vector<A>& xs, const std::vector<B>& ys) {
  using R0 = ts::promote_t<A, B>;
  using RD = ts::promote_t<A, B, true>;
  static_assert(std::is_same_v<R, R0> || std::is_same_v<R, RD>);
  const std::string an = name_of<A>(), bn = name_of<B>(), rn = name_of<R>();
  Case c(std::string(op_name(op)) + " " + an + " " + bn + (is_compare(op) ? "" : " -> " + rn));
  const auto triton = triton_type(an, bn, is_div_or_mod(op));
  if (!triton || *triton != rn) c.fail("result type " + rn + ", Triton's " + triton.value_or("an error"));

  const std::size_t n = xs.size();
  auto da = device_buffer(padded(xs, cast_ref<A>(1))), db = device_buffer(padded(ys, cast_ref<B>(1)));
  ts::Buffer<R0> dout(static_cast<std::size_t>(pow2_at_least(n)), executor());
  ts::Buffer<RD> doutd(static_cast<std::size_t>(pow2_at_least(n)), executor());
  ts::Buffer<std::uint8_t> dmask(static_cast<std::size_t>(pow2_at_least(n)), executor());
  kernel[options(n, op)](da, db, dout, doutd, dmask);
  std::vector<R> out;
  if (is_div_or_mod(op)) {
    if constexpr (std::is_same_v<R, RD>) out = doutd.to_host();
  } else {
    if constexpr (std::is_same_v<R, R0>) out = dout.to_host();
  }
  if (out.size() < n) {
    c.fail("run_op called with a result type that is not the op's");
    return;
  }
  const auto mask = dmask.to_host();
  for (std::size_t i = 0; i < n; ++i) {
    const R x = cast_ref<R>(xs[i]), y = cast_ref<R>(ys[i]);
    const auto inputs = [&] { return show(xs[i]) + " " + op_name(op) + " " + show(ys[i]); };
    if (is_compare(op)) {
      const bool want = compare(op, x, y);
      c.check(mask[i] == (want ? 1 : 0), [&] { return inputs() + " -> got " + std::to_string(mask[i]) + ", expected " + std::to_string(want); });
    } else if (op == Min || op == Max || op == MinNan || op == MaxNan) {
      c.check_value(out[i], min_max(op, x, y), inputs(), /*zero_sign=*/false);
    } else if constexpr (is_float_v<R>) {
      const R want = float_arith(op, x, y);
      // f32 `/` on NVIDIA is div.full.f32, within 2 ulp (as Triton's `/`; ops.def); exact elsewhere.
      // Subnormal quotients too (the H200 gives 1 ulp off there): an ulp of 2^-149 below 2^-126.
      if (op == Div && on_gpu() && std::is_same_v<R, float> && !is_nan(want) && std::isfinite(to_ld(want))) {
        const int e = want == R(0) ? -126 : std::max(std::ilogb(static_cast<double>(to_ld(want))), -126);
        const long double ulp = std::ldexp(1.0L, e - 23);
        c.check(std::fabs(to_ld(out[i]) - to_ld(want)) <= 2 * ulp, [&] { return inputs() + " -> got " + show(out[i]) + ", expected " + show(want) + " within 2 ulp"; });
      } else {
        c.check_value(out[i], want, inputs());
      }
    } else {
      c.check_value(out[i], int_arith(op, x, y), inputs());
    }
  }
}

// Every op on the pair (A, B).
template <class A, class B>
void run_pair() {
  using R = ts::promote_t<A, B>;
  auto kernel = make_kernel<A, B>();
  std::vector<A> xs;
  std::vector<B> ys;
  const auto va = edge_values<A>();
  const auto vb = edge_values<B>();
  for (const A& x : va)
    for (const B& y : vb) xs.push_back(x), ys.push_back(y);

  std::vector<int> ops = {Add, Sub, Mul, Min, Max, Eq, Ne, Lt, Le, Gt, Ge};
  if constexpr (is_float_v<R>) ops.insert(ops.end(), {Div, Rem, MinNan, MaxNan});
  if constexpr (is_int_v<A> && is_int_v<B>) ops.insert(ops.end(), {And, Or, Xor});
  for (int op : ops) {
    if (is_div_or_mod(op)) run_op<A, B, ts::promote_t<A, B, true>>(kernel, op, xs, ys);
    else run_op<A, B, R>(kernel, op, xs, ys);
  }

  if constexpr (is_int_v<R>) {
    // Integer / and %: no division by zero, no MIN / -1 (both undefined in Triton: LLVM's sdiv).
    std::vector<A> dx;
    std::vector<B> dy;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const R x = cast_ref<R>(xs[i]), y = cast_ref<R>(ys[i]);
      if (y == 0) continue;
      if constexpr (std::is_signed_v<R>)
        if (x == std::numeric_limits<R>::min() && y == R(-1)) continue;
      dx.push_back(xs[i]), dy.push_back(ys[i]);
    }
    if constexpr (!division_refused<A, B>) {  // else a compile-time error (tests/unit/compile_fail)
      run_op<A, B, R>(kernel, Div, dx, dy);
      run_op<A, B, R>(kernel, Rem, dx, dy);
    }
  }
  if constexpr (is_int_v<A> && std::is_same_v<A, B>) {
    // Shifts by 0 .. bits-1 (a larger amount is undefined in Triton: LLVM's shl/lshr/ashr).
    std::vector<A> sx, sy;
    constexpr int bits = 8 * sizeof(A);
    for (const A& x : va)
      for (int s : {0, 1, 3, bits / 2, bits - 1}) sx.push_back(x), sy.push_back(static_cast<A>(s));
    run_op<A, B, R>(kernel, Shl, sx, sy);
    run_op<A, B, R>(kernel, Shr, sx, sy);
  }
}

// Every pair (A, B) for B in AllTypes.
template <class A>
void run_pairs_with() {
  for_each_type<AllTypes>([](auto b) { run_pair<A, typename decltype(b)::type>(); });
}

}  // namespace conf::binary

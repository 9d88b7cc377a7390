// tessera's conformance suite: the semantics that Triton's python/test/unit/language/test_core.py
// checks and its language reference states, as tessera tests with every expected value computed
// on the host in plain C++ from those semantics (conformance.hpp: the harness, what a case is,
// the closing "conformance: N passed, M failed, K deliberately different" line).
//
// Covered (element types i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64, and fp8 in fp8_test.cpp;
// inputs: each type's edge values,
// NaN, ±0, ±inf, smallest and largest subnormals and normals, INT_MIN, INT_MAX, wrapping values):
// - binary_ops.hpp: + - * / % & | ^ << >> minimum maximum (both NaN modes) == != < <= > >= on
//   every pair of types, in Triton's promoted type (semantic.py's computation_type_impl), bit
//   exact (ints wrap; floats round to nearest even; ±0 distinguished except for min/max); integer
//   / and % truncate (C, as Triton's `//` and `%`), without x/0 or INT_MIN/-1 (undefined in Triton);
//   shifts by 0..bits-1 only.
// - this file: casts between every pair of types (float->int in range only: out of range is
//   undefined in Triton), neg, abs, where.
// - math_test.cpp: exp exp2 log log2 sqrt rsqrt sin cos tanh sigmoid erf floor ceil abs on f32
//   against double libm with the README's ULP bounds; sum/max/min reductions for every type.
// Result types are Triton's everywhere (promotion, / and % of f16/bf16 in f32, reduction types);
// / and % of ints of different signedness do not compile (tests/unit/compile_fail).
//
// Run: ./build/tests/tessera_conformance_tests (interpreter; TESSERA_CONFORMANCE_EXECUTOR=cuda
// for a GPU, host or host64 for the host targets).
#include "conformance.hpp"

using namespace conf;

namespace {

// ---------------------------------------------------------------------------------------------
// Casts: x.to<D>() for every (S, D).

// Inputs beyond the edge values that exercise rounding: integers just past each float format's
// exact range (ties and non-ties), and fractions that tie when narrowed.
template <class S>
std::vector<S> cast_inputs() {
  std::vector<S> v = edge_values<S>();
  if constexpr (is_int_v<S>) {
    for (long long x : {2049LL, 2051LL, 4097LL, 257LL, 259LL, 65519LL, 65520LL, 16777217LL, 16777219LL, -16777217LL,
                        (1LL << 53) + 1, (1LL << 53) + 3, -(1LL << 53) - 1, (1LL << 62) + 1})
      v.push_back(static_cast<S>(x));
  } else {
    for (long double x : {1.0L + 0x1p-11L, 1.0L + 3 * 0x1p-11L, 1.0L + 0x1p-8L, 1.0L + 3 * 0x1p-8L, 1.0L + 0x1p-24L,
                          1.0L + 3 * 0x1p-24L, 65520.0L, 65519.0L, 0x1p-25L, 3 * 0x1p-25L, 0x1p-150L, 0x1p-127L,
                          2.5L, -2.5L, 0.9L, -0.9L, 127.9L, -128.9L, 255.5L, 32767.75L, -32768.5L, 2147483520.0L,
                          -2147483648.0L, 4294967040.0L, 9.2233720368547748e18L, -9.2233720368547758e18L})
      v.push_back(round_to<S>(x));
  }
  return v;
}

template <class S, class D>
void run_cast() {
  auto kernel = ts::kernel("conformance_cast", [](ts::Ptr<S> a, ts::Ptr<D> out) {
    const auto offs = ts::arange(0, ts::meta("BLOCK"));
    ts::store(out + offs, ts::load(a + offs).template to<D>());
  });
  std::vector<S> xs;
  for (const S& x : cast_inputs<S>())
    if (cast_in_range<D>(x)) xs.push_back(x);  // float->int out of range: undefined in Triton
  Case c(std::string("cast ") + name_of<S>() + " -> " + name_of<D>());
  auto da = device_buffer(padded(xs, cast_ref<S>(0)));
  ts::Buffer<D> dout(da.size(), executor());
  kernel[options(xs.size())](da, dout);
  const auto out = dout.to_host();
  for (std::size_t i = 0; i < xs.size(); ++i) c.check_value(out[i], cast_ref<D>(xs[i]), show(xs[i]));
}

template <class S>
void run_casts_from() {
  for_each_type<AllTypes>([](auto d) { run_cast<S, typename decltype(d)::type>(); });
}

// ---------------------------------------------------------------------------------------------
// neg, abs and where, per type.

template <class T>
void run_unary_and_where() {
  auto kernel = ts::kernel("conformance_unary", [](ts::Ptr<T> a, ts::Ptr<T> b, ts::Ptr<std::uint8_t> cond, ts::Ptr<T> out) {
    const auto offs = ts::arange(0, ts::meta("BLOCK"));
    const auto x = ts::load(a + offs);
    switch (static_cast<int>(ts::meta("OP"))) {
      case 0: ts::store(out + offs, -x); break;
      case 1: ts::store(out + offs, ts::abs(x)); break;
      default: ts::store(out + offs, ts::where(ts::load(cond + offs) != 0, x, ts::load(b + offs))); break;
    }
  });
  const auto va = edge_values<T>();
  std::vector<T> xs, ys;
  std::vector<std::uint8_t> cs;
  for (const T& x : va)
    for (const T& y : va) xs.push_back(x), ys.push_back(y), cs.push_back(static_cast<std::uint8_t>((xs.size() * 7) % 3 == 0));
  auto da = device_buffer(padded(xs, cast_ref<T>(0))), db = device_buffer(padded(ys, cast_ref<T>(0)));
  auto dc = device_buffer(padded(cs, std::uint8_t{0}));
  ts::Buffer<T> dout(da.size(), executor());
  const std::string tn = name_of<T>();
  for (int op = 0; op < 3; ++op) {
    Case c((op == 0 ? "neg " : op == 1 ? "abs " : "where ") + tn);
    kernel[options(xs.size(), op)](da, db, dc, dout);
    const auto out = dout.to_host();
    for (std::size_t i = 0; i < xs.size(); ++i) {
      T want{};
      if (op == 2) {
        want = cs[i] ? xs[i] : ys[i];  // a select: NaN payloads and the sign of zero pass through
      } else if constexpr (is_float_v<T>) {
        // neg and abs flip or clear the sign bit only (IEEE): NaN stays NaN, -0 <-> +0.
        const long double v = to_ld(xs[i]);
        want = is_nan(xs[i]) ? xs[i] : float_from_exact<T>(op == 0 ? -v : std::fabs(v));
      } else {
        // Two's complement, wrapping: -INT_MIN and abs(INT_MIN) are INT_MIN (LLVM's abs with
        // is_int_min_poison = false, as Triton emits); abs of an unsigned is itself.
        const std::uint64_t u = static_cast<std::uint64_t>(xs[i]);
        const bool negate = op == 0 || (std::is_signed_v<T> && xs[i] < 0);
        want = static_cast<T>(negate ? std::uint64_t{0} - u : u);
      }
      c.check_value(out[i], want, (op == 2 ? std::string(cs[i] ? "true" : "false") + " ? " : "") + show(xs[i]) + (op == 2 ? " : " + show(ys[i]) : ""));
    }
  }
}

}  // namespace

TEST_CASE("conformance: casts from integers", "[conformance][cast]") {
  for_each_type<IntTypes>([](auto s) { run_casts_from<typename decltype(s)::type>(); });
}

TEST_CASE("conformance: casts from floats", "[conformance][cast]") {
  for_each_type<FloatTypes>([](auto s) { run_casts_from<typename decltype(s)::type>(); });
}

TEST_CASE("conformance: neg abs where", "[conformance][unary]") {
  for_each_type<AllTypes>([](auto t) { run_unary_and_where<typename decltype(t)::type>(); });
}

namespace {

// div_rn(x, y) and fdiv(x, y, true): the correctly rounded quotient on every executor; fdiv(x, y)
// is `/` (within 2 ulp for f32 on NVIDIA GPUs, as Triton's; exact elsewhere).
template <class T>
void run_correctly_rounded_division() {
  auto kernel = ts::kernel("conformance_div_rn", [](ts::Ptr<T> a, ts::Ptr<T> b, ts::Ptr<T> rn, ts::Ptr<T> ieee,
                                                    ts::Ptr<T> plain) {
    const auto offs = ts::arange(0, ts::meta("BLOCK"));
    const auto x = ts::load(a + offs), y = ts::load(b + offs);
    ts::store(rn + offs, ts::div_rn(x, y));
    ts::store(ieee + offs, ts::fdiv(x, y, true));
    ts::store(plain + offs, ts::fdiv(x, y));
  });
  std::vector<T> xs, ys;
  for (const T& x : edge_values<T>())
    for (const T& y : edge_values<T>()) xs.push_back(x), ys.push_back(y);
  auto da = device_buffer(padded(xs, T(1))), db = device_buffer(padded(ys, T(1)));
  ts::Buffer<T> drn(da.size(), executor()), dieee(da.size(), executor()), dplain(da.size(), executor());
  kernel[options(xs.size())](da, db, drn, dieee, dplain);
  const auto rn = drn.to_host(), ieee = dieee.to_host(), plain = dplain.to_host();
  const std::string tn = name_of<T>();
  Case c("div_rn " + tn), ci("fdiv(ieee_rounding) " + tn), cp("fdiv " + tn);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    // The IEEE quotient: exact in double for f64; for f32 the double quotient rounded once more
    // (double has more than 2p + 2 bits, so that is the correctly rounded f32 quotient).
    const double q = static_cast<double>(xs[i]) / static_cast<double>(ys[i]);
    const T want = std::is_same_v<T, double> ? static_cast<T>(q) : round_to<T>(q);
    const std::string in = show(xs[i]) + " / " + show(ys[i]);
    c.check_value(rn[i], want, in);
    ci.check_value(ieee[i], want, in);
    if (on_gpu() && std::is_same_v<T, float> && !is_nan(want) && std::isfinite(to_ld(want))) {
      // An ulp of the quotient, the subnormal one below 2^-126.
      const int e = want == T(0) ? -126 : std::max(std::ilogb(static_cast<double>(to_ld(want))), -126);
      const long double ulp = std::ldexp(1.0L, e - 23);
      cp.check(std::fabs(to_ld(plain[i]) - to_ld(want)) <= 2 * ulp, [&] { return in + " -> got " + show(plain[i]) + ", expected " + show(want) + " within 2 ulp"; });
    } else {
      cp.check_value(plain[i], want, in);
    }
  }
}

}  // namespace

TEST_CASE("conformance: div_rn and fdiv", "[conformance][division]") {
  run_correctly_rounded_division<float>();
  run_correctly_rounded_division<double>();
}

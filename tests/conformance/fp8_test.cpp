// fp8 (float8_e4m3: Triton's fp8e4nv, 4 exponent bits, bias 7, 3 mantissa bits, no infinities,
// NaN = S.1111.111, largest 448; float8_e5m2: Triton's fp8e5, IEEE-like, bias 15, 2 mantissa bits,
// largest finite 57344). The reference here is written from those definitions alone: a code's
// value from its fields, and a conversion as a search over all 256 codes for the nearest finite
// value (ties to the even code), saturating at the largest finite magnitude (infinities too), NaN
// staying NaN (ops.def; PTX's cvt.rn.satfinite). Covered: exact upcasts of every code to f16, bf16,
// f32, f64 and ints; downcasts from f16, bf16, f32, f64 and ints, to nearest even and toward zero,
// at every midpoint and its neighbours; + - * / minimum maximum and comparisons on fp8 pairs
// (computed in f32, rounded back once); the promoted types of fp8 with the other floats; a dot
// of fp8 tiles (f32 accumulator).
#include "conformance.hpp"

using namespace conf;

namespace {

struct Fp8Spec {
  int exponent_bits, mantissa_bits, bias;
  bool ieee_specials;  // e5m2: all-ones exponent is inf or NaN; e4m3: only S.1111.111 is NaN
};
template <class F>
constexpr Fp8Spec spec() {
  if constexpr (std::is_same_v<F, ts::float8_e4m3>) return {4, 3, 7, false};
  else return {5, 2, 15, true};
}

// The value of a code, from its sign, exponent and mantissa fields.
template <class F>
long double decode(std::uint8_t code) {
  constexpr Fp8Spec s = spec<F>();
  const int e = (code >> s.mantissa_bits) & ((1 << s.exponent_bits) - 1);
  const int m = code & ((1 << s.mantissa_bits) - 1);
  const bool all_ones = e == (1 << s.exponent_bits) - 1;
  const long double sign = (code & 0x80) ? -1.0L : 1.0L;
  if (s.ieee_specials && all_ones) return m == 0 ? sign * static_cast<long double>(INFINITY) : NAN;
  if (!s.ieee_specials && all_ones && m == (1 << s.mantissa_bits) - 1) return NAN;
  const long double magnitude = e == 0 ? std::ldexp(static_cast<long double>(m), 1 - s.bias - s.mantissa_bits)
                                       : std::ldexp(1.0L + std::ldexp(static_cast<long double>(m), -s.mantissa_bits), e - s.bias);
  return sign * magnitude;
}

// x converted to fp8 by search: the nearest finite magnitude (ties: the even code) or, toward
// zero, the largest not above |x|; beyond the largest finite value (infinity too): that value.
template <class F>
std::uint8_t encode(long double x, bool toward_zero = false) {
  if (std::isnan(x)) return 0x7f;
  const long double a = std::fabs(x);
  int best = -1;
  long double best_value = 0;
  int largest = 0;
  for (int c = 0; c < 0x80; ++c) {
    const long double v = decode<F>(static_cast<std::uint8_t>(c));
    if (std::isnan(v) || std::isinf(v)) continue;
    largest = c;  // codes of one sign are ordered by value
    if (toward_zero) {
      if (v <= a) best = c;
      continue;
    }
    const long double d = std::fabs(v - a), bd = std::fabs(best_value - a);
    if (best < 0 || d < bd || (d == bd && (c & 1) == 0)) best = c, best_value = v;
  }
  // Beyond the largest finite value every distance may round to the same long double: saturate here.
  if (a >= decode<F>(static_cast<std::uint8_t>(largest))) best = largest;
  return static_cast<std::uint8_t>(best | (std::signbit(x) ? 0x80 : 0));
}

template <class F>
F from_code(std::uint8_t c) {
  return F::from_bits(c);
}
template <class F>
std::vector<F> all_codes() {
  std::vector<F> v;
  for (int c = 0; c < 256; ++c) v.push_back(from_code<F>(static_cast<std::uint8_t>(c)));
  return v;
}

// fp8 results compare as codes, any NaN equal to any NaN.
template <class F>
void check_code(Case& c, F got, std::uint8_t want, const std::string& inputs) {
  c.check_value(got, from_code<F>(want), inputs);
}

// ---------------------------------------------------------------------------------------------
// Upcasts: every code, exactly.

template <class F, class D>
void run_upcast() {
  auto kernel = ts::kernel("conformance_fp8_up", [](ts::Ptr<F> a, ts::Ptr<D> out) {
    const auto offs = ts::arange(0, ts::meta("BLOCK"));
    ts::store(out + offs, ts::load(a + offs).template to<D>());
  });
  std::vector<F> xs;
  for (F x : all_codes<F>())
    if constexpr (is_int_v<D>) {
      const long double v = decode<F>(x.bits);  // float -> int in range only (Triton: else undefined)
      if (!std::isnan(v) && std::trunc(v) >= static_cast<long double>(std::numeric_limits<D>::min()) &&
          std::trunc(v) <= static_cast<long double>(std::numeric_limits<D>::max()))
        xs.push_back(x);
    } else {
      xs.push_back(x);
    }
  Case c(std::string("cast ") + name_of<F>() + " -> " + name_of<D>() + " (every code)");
  auto da = device_buffer(padded(xs, from_code<F>(0)));
  ts::Buffer<D> dout(da.size(), executor());
  kernel[options(xs.size())](da, dout);
  const auto out = dout.to_host();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const long double v = decode<F>(xs[i].bits);
    D want{};
    if constexpr (is_int_v<D>) want = static_cast<D>(std::trunc(v));
    else want = round_to<D>(v);  // exact: every fp8 value is one of D's
    c.check_value(out[i], want, show(xs[i]));
  }
}

// ---------------------------------------------------------------------------------------------
// Downcasts: every fp8 value, every midpoint between neighbours and the source values next to it,
// and values beyond the range, below the smallest subnormal, infinities and NaN.

// The neighbour of a source value one step up or down in its own format.
template <class S>
S step(S x, int dir) {
  if constexpr (std::is_floating_point_v<S>) {
    return std::nextafter(x, dir > 0 ? std::numeric_limits<S>::infinity() : -std::numeric_limits<S>::infinity());
  } else {  // half, bfloat16: the bits of one sign are ordered by magnitude
    const bool up_in_magnitude = (dir > 0) != std::signbit(static_cast<float>(x));
    return S::from_bits(static_cast<std::uint16_t>(x.bits + (up_in_magnitude ? 1 : -1)));
  }
}

template <class F, class S>
std::vector<S> downcast_inputs() {
  std::vector<long double> exact;
  std::vector<long double> values;
  for (int c = 0; c < 0x80; ++c) {
    const long double v = decode<F>(static_cast<std::uint8_t>(c));
    if (!std::isnan(v) && !std::isinf(v)) values.push_back(v);
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    exact.push_back(values[i]);
    if (i + 1 < values.size()) exact.push_back((values[i] + values[i + 1]) / 2);
  }
  const long double largest = values.back(), ulp = values.back() - values[values.size() - 2];
  for (long double x : {largest + ulp / 2, largest + ulp / 4, largest + ulp, 2 * largest, 1e10L, 1e30L,
                        values[1] / 2, values[1] / 4, values[1] * 0.75L, 1e-30L})
    exact.push_back(x);
  std::vector<S> v;
  for (long double x : exact)
    for (long double signed_x : {x, -x}) {
      const S s = round_to<S>(signed_x);  // a value S cannot hold is replaced by its nearest
      v.push_back(s);
      if (std::fabs(static_cast<long double>(to_ld(s))) > 0 && !std::isinf(to_ld(s))) {
        v.push_back(step(s, +1));
        v.push_back(step(s, -1));
      }
    }
  for (long double x : {(long double)INFINITY, -(long double)INFINITY, (long double)NAN}) v.push_back(round_to<S>(x));
  return v;
}

template <class F, class S>
void run_downcast(bool toward_zero) {
  auto kernel = ts::kernel("conformance_fp8_down", [](ts::Ptr<S> a, ts::Ptr<F> out) {
    const auto offs = ts::arange(0, ts::meta("BLOCK"));
    const auto x = ts::load(a + offs);
    if (static_cast<int>(ts::meta("OP")) == 1) ts::store(out + offs, x.template to<F>(ts::Rounding::rtz));
    else ts::store(out + offs, x.template to<F>());
  });
  const std::vector<S> xs = downcast_inputs<F, S>();
  Case c(std::string("cast ") + name_of<S>() + " -> " + name_of<F>() + (toward_zero ? " (rtz)" : " (rtne)"));
  auto da = device_buffer(padded(xs, round_to<S>(0)));
  ts::Buffer<F> dout(da.size(), executor());
  kernel[options(xs.size(), toward_zero ? 1 : 0)](da, dout);
  const auto out = dout.to_host();
  for (std::size_t i = 0; i < xs.size(); ++i) check_code(c, out[i], encode<F>(to_ld(xs[i]), toward_zero), show(xs[i]));
}

template <class F, class I>
void run_int_to_fp8() {
  auto kernel = ts::kernel("conformance_int_fp8", [](ts::Ptr<I> a, ts::Ptr<F> out) {
    const auto offs = ts::arange(0, ts::meta("BLOCK"));
    ts::store(out + offs, ts::load(a + offs).template to<F>());
  });
  std::vector<I> xs = edge_values<I>();
  for (long long x : {17LL, 19LL, 200LL, 232LL, 248LL, 440LL, 449LL, 464LL, 480LL, 57343LL, 57344LL, 61439LL,
                      61440LL, 65536LL, 131071LL, 131072LL, 131073LL, 1LL << 40, -449LL, -464LL, -61440LL})
    xs.push_back(static_cast<I>(x));
  for (long long x = -300; x <= 300; x += 7) xs.push_back(static_cast<I>(x));
  Case c(std::string("cast ") + name_of<I>() + " -> " + name_of<F>());
  auto da = device_buffer(padded(xs, I{0}));
  ts::Buffer<F> dout(da.size(), executor());
  kernel[options(xs.size())](da, dout);
  const auto out = dout.to_host();
  for (std::size_t i = 0; i < xs.size(); ++i)
    check_code(c, out[i], encode<F>(static_cast<long double>(xs[i])), show(xs[i]));
}

// ---------------------------------------------------------------------------------------------
// Arithmetic on two fp8 tiles of one format: the result is fp8, computed in f32 and rounded once
// (for + - * / of fp8 operands the f32 result is exact or never near an fp8 midpoint, so this is
// the nearest fp8 of the exact result).

enum Fp8Op : int { Add, Sub, Mul, Div, Min, Max, Lt, Eq, Ne, Neg, Abs };
constexpr const char* kOpNames[] = {"+", "-", "*", "/", "minimum", "maximum", "<", "==", "!=", "neg", "abs"};

template <class F>
void run_arith(Fp8Op op) {
  auto kernel = ts::kernel("conformance_fp8_arith", [](ts::Ptr<F> a, ts::Ptr<F> b, ts::Ptr<F> out,
                                                       ts::Ptr<std::uint8_t> mask) {
    const auto offs = ts::arange(0, ts::meta("BLOCK"));
    const auto x = ts::load(a + offs), y = ts::load(b + offs);
    static_assert(std::is_same_v<typename decltype(x + y)::element_type, F>, "fp8 with fp8 keeps the format");
    const int k = static_cast<int>(ts::meta("OP"));
    if (k == Add) ts::store(out + offs, x + y);
    if (k == Sub) ts::store(out + offs, x - y);
    if (k == Mul) ts::store(out + offs, x * y);
    if (k == Div) ts::store(out + offs, x / y);
    if (k == Min) ts::store(out + offs, ts::minimum(x, y));
    if (k == Max) ts::store(out + offs, ts::maximum(x, y));
    if (k == Lt) ts::store(mask + offs, (x < y).template to<std::uint8_t>());
    if (k == Eq) ts::store(mask + offs, (x == y).template to<std::uint8_t>());
    if (k == Ne) ts::store(mask + offs, (x != y).template to<std::uint8_t>());
    if (k == Neg) ts::store(out + offs, -x);
    if (k == Abs) ts::store(out + offs, ts::abs(x));
  });
  // Every code against 24 partners spread over the range (every code pairs with each).
  std::vector<F> xs, ys;
  const auto codes = all_codes<F>();
  for (int i = 0; i < 256; ++i)
    for (int j = 0; j < 24; ++j) {
      xs.push_back(codes[static_cast<std::size_t>(i)]);
      ys.push_back(codes[static_cast<std::size_t>((i * 7 + j * 11 + j * j * 13) % 256)]);
    }
  Case c(std::string(name_of<F>()) + " " + kOpNames[op] + " " + name_of<F>());
  auto da = device_buffer(padded(xs, from_code<F>(0x38))), db = device_buffer(padded(ys, from_code<F>(0x38)));
  ts::Buffer<F> dout(da.size(), executor());
  ts::Buffer<std::uint8_t> dmask(da.size(), executor());
  kernel[options(xs.size(), op)](da, db, dout, dmask);
  const auto out = dout.to_host();
  const auto mask = dmask.to_host();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const long double x = decode<F>(xs[i].bits), y = decode<F>(ys[i].bits);
    const auto inputs = [&] { return show(xs[i]) + " " + kOpNames[op] + " " + show(ys[i]); };
    if (op == Lt || op == Eq || op == Ne) {
      const bool want = op == Lt ? x < y : op == Eq ? x == y : !(x == y);  // != is true with a NaN
      c.check(mask[i] == (want ? 1 : 0), [&] { return inputs() + " -> got " + std::to_string(mask[i]); });
      continue;
    }
    long double r = 0;
    switch (op) {
      case Add: r = x + y; break;
      case Sub: r = x - y; break;
      case Mul: r = x * y; break;
      case Div: r = x / y; break;
      case Min: r = std::isnan(x) ? y : std::isnan(y) ? x : std::fmin(x, y); break;
      case Max: r = std::isnan(x) ? y : std::isnan(y) ? x : std::fmax(x, y); break;
      case Neg: r = -x; break;
      default: r = std::fabs(x); break;
    }
    const bool zero_sign = op != Min && op != Max;  // minnum/maxnum may return either zero
    c.check_value(out[i], from_code<F>(encode<F>(r)), inputs(), zero_sign);
  }
}

// fp8 with another float: Triton's computation types (f16 for the two fp8 formats together and
// for f16; f32 with bf16; f32 and f64 win), values as the exact result rounded once to that type.
template <class A, class B, class Want>
void run_mixed() {
  using R = typename decltype(std::declval<ts::Tile<A>>() + std::declval<ts::Tile<B>>())::element_type;
  static_assert(std::is_same_v<R, Want>, "fp8 promotion differs from Triton's");
  auto kernel = ts::kernel("conformance_fp8_mixed", [](ts::Ptr<A> a, ts::Ptr<B> b, ts::Ptr<R> out) {
    const auto offs = ts::arange(0, ts::meta("BLOCK"));
    ts::store(out + offs, ts::load(a + offs) + ts::load(b + offs));
  });
  std::vector<A> xs;
  std::vector<B> ys;
  for (int i = 0; i < 512; ++i) {
    const auto code = static_cast<std::uint8_t>((i * 37) % 256);
    if constexpr (is_fp8_v<A>) xs.push_back(from_code<A>(code));
    else xs.push_back(round_to<A>(decode<ts::float8_e5m2>(code) * 1.1L));
    ys.push_back(from_code<B>(static_cast<std::uint8_t>((i * 101 + 3) % 256)));
  }
  Case c(std::string(name_of<A>()) + " + " + name_of<B>() + " -> " + name_of<R>());
  auto da = device_buffer(padded(xs, xs[0])), db = device_buffer(padded(ys, ys[0]));
  ts::Buffer<R> dout(da.size(), executor());
  kernel[options(xs.size())](da, db, dout);
  const auto out = dout.to_host();
  for (std::size_t i = 0; i < xs.size(); ++i)
    c.check_value(out[i], round_to<R>(to_ld(xs[i]) + to_ld(ys[i])), show(xs[i]) + " + " + show(ys[i]));
}

// C++ numbers next to an fp8 tile are weak (they take its type), as Triton's scalars.
template <class F>
void run_scalar_operands() {
  static_assert(std::is_same_v<typename decltype(std::declval<ts::Tile<F>>() * 2)::element_type, F>);
  static_assert(std::is_same_v<typename decltype(std::declval<ts::Tile<F>>() + 0.5f)::element_type, F>);
  static_assert(std::is_same_v<typename decltype(std::declval<ts::Tile<F>>() / 2)::element_type, F>);
  auto kernel = ts::kernel("conformance_fp8_scalar", [](ts::Ptr<F> a, ts::Ptr<F> out) {
    const auto offs = ts::arange(0, ts::meta("BLOCK"));
    ts::store(out + offs, ts::load(a + offs) * 3 + 0.3f);
  });
  const auto xs = all_codes<F>();
  Case c(std::string(name_of<F>()) + " * 3 + 0.3f");
  auto da = device_buffer(xs);
  ts::Buffer<F> dout(da.size(), executor());
  kernel[options(xs.size())](da, dout);
  const auto out = dout.to_host();
  const long double three = 3, point3 = decode<F>(encode<F>(0.3L));  // the literal takes the tile's type
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const long double product = decode<F>(encode<F>(decode<F>(xs[i].bits) * three));
    c.check_value(out[i], from_code<F>(encode<F>(product + point3)), show(xs[i]));
  }
}

// dot of 16 x 32 and 32 x 16 fp8 tiles with an f32 accumulator: the products are exact, so the
// result is the exact sum up to f32 accumulation (any order).
template <class F>
void run_dot() {
  auto kernel = ts::kernel("conformance_fp8_dot", [](ts::Ptr<F> a, ts::Ptr<F> b, ts::Ptr<float> out) {
    const auto r = ts::arange(0, 16), k = ts::arange(0, 32);
    const auto x = ts::load(a + r.col() * 32 + k.row());
    const auto y = ts::load(b + k.col() * 16 + r.row());
    ts::store(out + r.col() * 16 + r.row(), ts::dot(x, y));
  });
  std::vector<F> xs(16 * 32), ys(32 * 16);
  // Finite codes of moderate size (sums stay far below f32's range): exponents near the bias.
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = from_code<F>(static_cast<std::uint8_t>(0x20 + (i * 29) % 0x30 + (i % 3 == 0 ? 0x80 : 0)));
  for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = from_code<F>(static_cast<std::uint8_t>(0x20 + (i * 17) % 0x30 + (i % 5 == 0 ? 0x80 : 0)));
  Case c(std::string("dot ") + name_of<F>() + " 16x32x16");
  auto da = device_buffer(xs), db = device_buffer(ys);
  ts::Buffer<float> dout(256, executor());
  kernel[{.grid = {1}, .meta = {{"BLOCK", 16}, {"OP", 0}}, .executor = executor()}](da, db, dout);
  const auto out = dout.to_host();
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      long double exact = 0, magnitude = 0;
      for (int p = 0; p < 32; ++p) {
        const long double t = decode<F>(xs[static_cast<std::size_t>(i * 32 + p)].bits) * decode<F>(ys[static_cast<std::size_t>(p * 16 + j)].bits);
        exact += t;
        magnitude += std::fabs(t);
      }
      const long double got = out[static_cast<std::size_t>(i * 16 + j)];
      c.check(std::fabs(got - exact) <= magnitude * 0x1p-21L, [&] {
        return "(" + std::to_string(i) + ", " + std::to_string(j) + ") got " + std::to_string(static_cast<double>(got)) +
               ", exact " + std::to_string(static_cast<double>(exact));
      });
    }
}

// sum and max of fp8 rows: sums keep the fp8 type (Triton's _pick_sum_dtype), computed in f32 and
// rounded per step; the inputs (0, 1 and 0.5 for e4m3) make every partial sum exact in either
// format, so any reduction order gives the exact sum. max of a type narrower than 32 bits is f32.
template <class F>
void run_reductions() {
  auto kernel = ts::kernel("conformance_fp8_reduce", [](ts::Ptr<F> a, ts::Ptr<F> sums, ts::Ptr<float> maxes) {
    const auto r = ts::arange(0, 16), c = ts::arange(0, 8);
    const auto x = ts::load(a + r.col() * 8 + c.row());
    static_assert(std::is_same_v<typename decltype(ts::sum(x, 1))::element_type, F>);
    ts::store(sums + r, ts::sum(x, 1));
    ts::store(maxes + r, ts::max(x, 1));
  });
  std::vector<F> xs(128);
  const long double half = std::is_same_v<F, ts::float8_e4m3> ? 0.5L : 1.0L;
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = from_code<F>(encode<F>(static_cast<long double>((i * 7 + i / 8) % 3) * half));
  Case c(std::string("sum and max of ") + name_of<F>() + " rows");
  auto da = device_buffer(xs);
  ts::Buffer<F> dsum(16, executor());
  ts::Buffer<float> dmax(16, executor());
  kernel[{.grid = {1}, .meta = {{"BLOCK", 16}, {"OP", 0}}, .executor = executor()}](da, dsum, dmax);
  const auto sums = dsum.to_host();
  const auto maxes = dmax.to_host();
  for (int i = 0; i < 16; ++i) {
    long double sum = 0, max = -INFINITY;
    for (int j = 0; j < 8; ++j) {
      const long double v = decode<F>(xs[static_cast<std::size_t>(i * 8 + j)].bits);
      sum += v;
      max = std::max(max, v);
    }
    c.check_value(sums[static_cast<std::size_t>(i)], from_code<F>(encode<F>(sum)), "row " + std::to_string(i) + " sum");
    c.check_value(maxes[static_cast<std::size_t>(i)], static_cast<float>(max), "row " + std::to_string(i) + " max");
  }
}

template <class F>
void run_format() {
  run_upcast<F, float>();
  run_upcast<F, double>();
  run_upcast<F, ts::half>();
  run_upcast<F, ts::bfloat16>();
  run_upcast<F, std::int32_t>();
  run_upcast<F, std::int8_t>();
  run_upcast<F, std::uint8_t>();
  for (bool rtz : {false, true}) {
    run_downcast<F, float>(rtz);
    run_downcast<F, double>(rtz);
    run_downcast<F, ts::half>(rtz);
    run_downcast<F, ts::bfloat16>(rtz);
  }
  run_int_to_fp8<F, std::int32_t>();
  run_int_to_fp8<F, std::int8_t>();
  run_int_to_fp8<F, std::uint64_t>();
  run_int_to_fp8<F, std::int64_t>();
  for (Fp8Op op : {Add, Sub, Mul, Div, Min, Max, Lt, Eq, Ne, Neg, Abs}) run_arith<F>(op);
  run_scalar_operands<F>();
  run_dot<F>();
  run_reductions<F>();
}

}  // namespace

TEST_CASE("conformance: fp8 e4m3 casts, arithmetic and dot", "[conformance][fp8]") { run_format<ts::float8_e4m3>(); }
TEST_CASE("conformance: fp8 e5m2 casts, arithmetic and dot", "[conformance][fp8]") { run_format<ts::float8_e5m2>(); }

TEST_CASE("conformance: fp8 with the other float types", "[conformance][fp8]") {
  using E4 = ts::float8_e4m3;
  using E5 = ts::float8_e5m2;
  run_mixed<E4, E5, ts::half>();
  run_mixed<E5, E4, ts::half>();
  run_mixed<ts::half, E4, ts::half>();
  run_mixed<ts::bfloat16, E5, float>();
  run_mixed<float, E4, float>();
  run_mixed<double, E5, double>();
}

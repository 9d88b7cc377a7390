// The conformance suite's harness (see arith_test.cpp for what the suite covers).
//
// A *case* is one op on one combination of element types, run as one kernel launch over a tile
// of inputs (edge values: NaN, ±0, ±inf, subnormals, INT_MIN/INT_MAX, overflow). Every expected
// value is computed here, on the host, in plain C++ from the semantics Triton states (IEEE-754
// round-to-nearest-even, C integer semantics with wraparound); nothing expected comes from
// running tessera. A case passes when every element matches; it counts as *deliberately
// different* when tessera's documented departure from Triton (notes/language.md) decides its
// result, in which case the elements are checked against tessera's documented rule instead, so
// that the departure cannot change silently. The test program prints, when the run ends,
//   conformance: N passed, M failed, K deliberately different (V values compared)
// followed by the deliberately different cases, one line each with its reason.
//
// Executor: the interpreter, or TESSERA_CONFORMANCE_EXECUTOR=cuda|hip|host|host64.
#pragma once
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace ts = tessera;

namespace conf {

// ---------------------------------------------------------------------------------------------
// The tally and the executor.

struct Tally {
  long passed = 0, failed = 0, different = 0, values = 0;
  std::vector<std::pair<std::string, std::string>> different_cases;  // (reason, case), in run order
  std::vector<std::string> failed_cases;
};
Tally& tally();
ts::Executor executor();
// A GPU executor: where the README states looser bounds than the interpreter's (f32 `/` and the
// math functions), those apply.
bool on_gpu();

// ---------------------------------------------------------------------------------------------
// Element types on the host.

template <class T>
inline constexpr bool is_fp8_v = std::is_same_v<T, ts::float8_e4m3> || std::is_same_v<T, ts::float8_e5m2>;
template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, ts::half> ||
                                   std::is_same_v<T, ts::bfloat16> || is_fp8_v<T>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
constexpr const char* name_of() {
  if constexpr (std::is_same_v<T, std::int8_t>) return "i8";
  else if constexpr (std::is_same_v<T, std::int16_t>) return "i16";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "i32";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "i64";
  else if constexpr (std::is_same_v<T, std::uint8_t>) return "u8";
  else if constexpr (std::is_same_v<T, std::uint16_t>) return "u16";
  else if constexpr (std::is_same_v<T, std::uint32_t>) return "u32";
  else if constexpr (std::is_same_v<T, std::uint64_t>) return "u64";
  else if constexpr (std::is_same_v<T, ts::float8_e4m3>) return "f8e4m3";
  else if constexpr (std::is_same_v<T, ts::float8_e5m2>) return "f8e5m2";
  else if constexpr (std::is_same_v<T, ts::half>) return "f16";
  else if constexpr (std::is_same_v<T, ts::bfloat16>) return "bf16";
  else if constexpr (std::is_same_v<T, float>) return "f32";
  else if constexpr (std::is_same_v<T, double>) return "f64";
  else return "?";
}

// The element types of the suite, for compile-time loops over types and pairs of types.
template <class T>
struct Type {
  using type = T;
};
// fp8 has its own cases (fp8_test.cpp): it saturates where these formats overflow to infinity.
using IntTypes = std::tuple<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t,
                            std::uint32_t, std::uint64_t>;
using FloatTypes = std::tuple<ts::half, ts::bfloat16, float, double>;
using AllTypes = std::tuple<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t,
                            std::uint32_t, std::uint64_t, ts::half, ts::bfloat16, float, double>;
template <class Tuple, class F>
void for_each_type(F&& f) {
  std::apply([&](auto... t) { (f(Type<decltype(t)>{}), ...); }, Tuple{});
}

// An IEEE binary format: p significand bits (with the implicit one), exponents emin..emax of
// normal numbers.
struct Format {
  int p, emin, emax;
};
template <class T>
constexpr Format format_of() {
  if constexpr (std::is_same_v<T, ts::half>) return {11, -14, 15};
  else if constexpr (std::is_same_v<T, ts::bfloat16>) return {8, -126, 127};
  else if constexpr (std::is_same_v<T, float>) return {24, -126, 127};
  else return {53, -1022, 1023};
}

// x rounded to nearest even in format f, with gradual underflow and overflow to ±inf. x86-64's
// long double has a 64-bit significand, so every input here (an int64, a double) is exact in it.
inline long double round_to_format(long double x, Format f) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  int e = 0;
  std::frexp(x, &e);                                     // |x| in [2^(e-1), 2^e)
  const int quantum = std::max(e - 1, f.emin) - (f.p - 1);  // exponent of the last kept bit
  const long double r = std::ldexp(std::nearbyint(std::ldexp(x, -quantum)), quantum);  // ties to even
  if (std::fabs(r) >= std::ldexp(1.0L, f.emax + 1)) return std::copysign(INFINITY, x);
  return r;
}

// The value of a host element, exactly.
template <class T>
long double to_ld(T v) {
  if constexpr (std::is_same_v<T, ts::half> || std::is_same_v<T, ts::bfloat16> || is_fp8_v<T>) return static_cast<float>(v);
  else return static_cast<long double>(v);
}
// A value exactly representable in float type T (or ±inf, NaN) as a T.
template <class T>
T float_from_exact(long double v) {
  if constexpr (std::is_same_v<T, ts::half> || std::is_same_v<T, ts::bfloat16>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}
// x rounded to nearest even in float type T.
template <class T>
T round_to(long double x) {
  return float_from_exact<T>(round_to_format(x, format_of<T>()));
}

// Triton's cast (tl.cast / .to): int->int wraps (sign- or zero-extends by the source), int->float
// and float->float round to nearest even, float->int truncates toward zero (in range only: out of
// range is undefined in Triton, and the suite does not ask).
template <class D, class S>
D cast_ref(S v) {
  if constexpr (is_int_v<S> && is_int_v<D>) return static_cast<D>(v);  // modular since C++20
  else if constexpr (is_float_v<D>) return round_to<D>(to_ld(v));
  else return static_cast<D>(std::trunc(to_ld(v)));
}
// Whether float value v converts to int type D without leaving D's range (Triton: else undefined).
template <class D, class S>
bool cast_in_range(S v) {
  if constexpr (is_float_v<S> && is_int_v<D>) {
    const long double t = std::trunc(to_ld(v));
    return !std::isnan(t) && t >= static_cast<long double>(std::numeric_limits<D>::min()) &&
           t <= static_cast<long double>(std::numeric_limits<D>::max());
  } else {
    return true;
  }
}

template <class T>
std::uint64_t bits_of(T v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
bool is_nan(T v) {
  if constexpr (is_float_v<T>) return std::isnan(to_ld(v));
  else return false;
}

// How results compare: integers by value; floats bit for bit, except that any NaN equals any
// NaN (Triton states no payload) and, where `zero_sign` is false, +0 equals -0 (minnum/maxnum
// may return either zero).
template <class T>
bool same(T got, T want, bool zero_sign = true) {
  if constexpr (is_float_v<T>) {
    if (is_nan(want) || is_nan(got)) return is_nan(want) && is_nan(got);
    if (!zero_sign && to_ld(want) == 0 && to_ld(got) == 0) return true;
    return bits_of(got) == bits_of(want);
  } else {
    return got == want;
  }
}

template <class T>
std::string show(T v) {
  std::ostringstream o;
  if constexpr (is_float_v<T>) {
    o.precision(std::is_same_v<T, double> ? 17 : 9);
    o << to_ld(v) << " [0x" << std::hex << bits_of(v) << "]";
  } else if constexpr (sizeof(T) == 1) {
    o << static_cast<int>(v);
  } else {
    o << v;
  }
  return o.str();
}

// ---------------------------------------------------------------------------------------------
// Edge values of each type: the inputs of every case.

template <class T>
std::vector<T> edge_values() {
  std::vector<T> v;
  if constexpr (is_int_v<T>) {
    using L = std::numeric_limits<T>;
    for (long long x : {0LL, 1LL, -1LL, 2LL, -2LL, 3LL, 7LL, -8LL, 100LL, -100LL, 12345LL, -12345LL})
      v.push_back(static_cast<T>(x));  // wraps for narrow and unsigned types: more edge values
    for (T x : {L::min(), T(L::min() + 1), L::max(), T(L::max() - 1), T(L::max() / 2 + 1), T(0x55555555)}) v.push_back(x);
  } else {
    constexpr Format f = format_of<T>();
    const long double max = std::ldexp(2.0L - std::ldexp(1.0L, 1 - f.p), f.emax);
    const long double min_normal = std::ldexp(1.0L, f.emin), min_sub = std::ldexp(1.0L, f.emin - f.p + 1);
    for (long double x : {0.0L, -0.0L, 1.0L, -1.0L, 0.5L, -2.5L, 3.0L, 1.0L / 3, -7.0L / 3, 100.0L, 1e4L, -65519.0L,
                          1.0L + std::ldexp(1.0L, 1 - f.p), min_sub, -min_sub, min_normal - min_sub, min_normal,
                          -min_normal, max, -max, std::ldexp(1.0L, f.emax), (long double)INFINITY,
                          -(long double)INFINITY, (long double)NAN})
      v.push_back(round_to<T>(x));
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// A case and its verdict.

// Where tessera deliberately differs from Triton: the reason, one line. Empty: it conforms.
struct Departure {
  std::string reason;
};

// Collects the element checks of one case; its destructor (end of scope) gives the verdict:
// passed, failed (first few mismatches reported through Catch), or deliberately different.
class Case {
 public:
  explicit Case(std::string name, Departure departure = {});
  Case(const Case&) = delete;
  Case& operator=(const Case&) = delete;
  ~Case();
  // One element: `ok` and, for a mismatch, what to print (built only then).
  template <class Describe>
  void check(bool ok, Describe&& describe) {
    ++values_;
    if (ok) return;
    if (++mismatches_ <= 6) mismatch_text_ += "\n  " + describe();
  }
  // got vs want under `same`, described with the inputs.
  template <class T>
  void check_value(T got, T want, const std::string& inputs, bool zero_sign = true) {
    check(same(got, want, zero_sign), [&] { return inputs + " -> got " + show(got) + ", expected " + show(want); });
  }
  void fail(const std::string& why) { check(false, [&] { return why; }); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  Departure departure_;
  long values_ = 0, mismatches_ = 0;
  std::string mismatch_text_;
};

// ---------------------------------------------------------------------------------------------
// Launching.

template <class T>
ts::Buffer<T> device_buffer(const std::vector<T>& host) {
  return ts::Buffer<T>::from_host(std::span<const T>(host), executor());
}
inline std::int64_t pow2_at_least(std::size_t n) {
  std::int64_t b = 16;
  while (b < static_cast<std::int64_t>(n)) b *= 2;
  return b;
}
// One program of BLOCK (a power of two >= n) lanes, with meta-parameter OP naming the op.
inline ts::LaunchOptions options(std::size_t n, int op = 0) {
  return {.grid = {1}, .meta = {{"BLOCK", pow2_at_least(n)}, {"OP", op}}, .executor = executor()};
}
// Pads v to BLOCK elements with `fill` (lanes past n are computed, never compared).
template <class T>
std::vector<T> padded(std::vector<T> v, T fill) {
  v.resize(static_cast<std::size_t>(pow2_at_least(v.size())), fill);
  return v;
}

}  // namespace conf

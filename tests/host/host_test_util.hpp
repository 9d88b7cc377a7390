// Helpers of the host-target tests (tessera_host_tests): every kernel runs on the interpreter (the
// oracle, which ignores layouts) and on the host SIMT targets (Executor::Host, warps of 32, and
// Executor::Host64, warps of 64), which execute the very LLVM IR the GPU targets get. Inputs are
// random and the same for every run; outputs start poisoned, so an element no thread writes
// fails; results compare element by element, and a failure prints the first offenders.
#pragma once
#include <catch2/catch.hpp>
#include <tessera/host.hpp>
#include <tessera/tessera.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace host_test {

namespace ts = tessera;

inline constexpr std::uint32_t kSeed = 20261201;  // printed by the tests that draw from it

// Every num_warps the runtime allows, and the problem sizes of the issue: one element, a tail, and
// a million and three (2^20 + 3: many programs, a partial last one).
// Under AddressSanitizer (CI's second pass, tests/ci/sanitize.sh) what is checked is the C++
// around the generated code (hooks, fibers, the JIT), not the lowering again: fewer warp counts and
// no runs over 20,000 elements keep that pass to a fraction of its full time.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
inline constexpr int kAllWarps[] = {1, 4, 32};
inline constexpr std::int64_t kSizes[] = {1, 1000};
#else
inline constexpr bool kSanitized = false;
inline constexpr int kAllWarps[] = {1, 2, 4, 8, 16, 32};
inline constexpr std::int64_t kSizes[] = {1, 1000, (1 << 20) + 3};
#endif
// Whether a case of this many elements is left out of the sanitized pass.
inline bool skip_when_sanitized(std::int64_t elements) { return kSanitized && elements > 20000; }

// Elements per program for an elementwise kernel over n elements of `elem_bytes`: 1024 on small
// inputs, where the widest layouts (16-byte vectors per thread, 32 warps of 64) replicate elements
// over threads, and on large ones at least one vector per thread, so that a million elements are
// not computed 32 times over.
inline int block_for(ts::Executor e, int warps, std::int64_t n, int elem_bytes) {
  if (n <= 4096) return 1024;
  const int lanes = e == ts::Executor::Host64 ? 64 : 32;
  return std::max(1024, warps * lanes * 16 / elem_bytes);
}

// The test program registers the host executor itself (tessera/host.hpp): the linker keeps the
// library, whatever its --as-needed default.
inline void enable_host() {
  static const bool enabled = (ts::host::enable(), true);
  (void)enabled;
}

inline const char* executor_name(ts::Executor ex) {
  switch (ex) {
    case ts::Executor::Host: return "host (warps of 32)";
    case ts::Executor::Host64: return "host64 (warps of 64)";
    case ts::Executor::Interpreter: return "interpreter";
    default: return "other";
  }
}

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_same_v<T, std::int8_t>) return "i8";
  else if constexpr (std::is_same_v<T, std::uint8_t>) return "u8";
  else if constexpr (std::is_same_v<T, std::int16_t>) return "i16";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "i32";
  else if constexpr (std::is_same_v<T, std::uint32_t>) return "u32";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "i64";
  else if constexpr (std::is_same_v<T, ts::half>) return "f16";
  else if constexpr (std::is_same_v<T, ts::bfloat16>) return "bf16";
  else if constexpr (std::is_same_v<T, float>) return "f32";
  else return "f64";
}

// Every byte 0x7f: a huge f32/f64, a NaN f16/bf16, a large integer: never a plausible result.
template <class T>
std::vector<T> poisoned(std::size_t n) {
  std::vector<T> v(n);
  if (n) std::memset(static_cast<void*>(v.data()), 0x7f, n * sizeof(T));
  return v;
}

template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937& rng, double lo, double hi) {
  std::vector<T> v(n);
  if constexpr (std::is_same_v<T, bool>) {
    std::bernoulli_distribution d(0.5);
    for (std::size_t i = 0; i < n; ++i) v[i] = d(rng);
  } else if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<std::int64_t> d(static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi));
    for (auto& x : v) x = static_cast<T>(d(rng));
  } else {
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto& x : v) x = static_cast<T>(d(rng));
  }
  return v;
}

template <class T>
double as_double(const T& v) {
  if constexpr (std::is_same_v<T, ts::half> || std::is_same_v<T, ts::bfloat16>) return static_cast<float>(v);
  else return static_cast<double>(v);
}

template <class T>
bool is_nan(const T& v) {
  if constexpr (std::is_integral_v<T>) return false;
  else return std::isnan(as_double(v));
}

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// The spacing of T's numbers at |v| (one ulp).
template <class T>
double ulp_of(double v) {
  const double a = std::fabs(v);
  if (!std::isfinite(a)) return INFINITY;
  int e = 0;
  std::frexp(a == 0 ? std::numeric_limits<double>::min() : a, &e);  // a in [2^(e-1), 2^e)
  int mant = 0, min_exp = 0;  // stored mantissa bits, and the exponent of the smallest normal
  if constexpr (std::is_same_v<T, float>) mant = 23, min_exp = -126;
  else if constexpr (std::is_same_v<T, double>) mant = 52, min_exp = -1022;
  else if constexpr (std::is_same_v<T, ts::half>) mant = 10, min_exp = -14;
  else mant = 7, min_exp = -126;  // bfloat16
  return std::ldexp(1.0, std::max(e - 1, min_exp) - mant);
}

// Where `got` (one executor) and `want` (the interpreter) differ beyond `allowed(i, want)` (0:
// exactly; NaN matches NaN, since payloads are not specified).
struct Mismatches {
  std::int64_t count = 0;
  std::string first;  // the first few offenders, for the failure message
};

template <class T>
Mismatches compare(const std::vector<T>& got, const std::vector<T>& want,
                   const std::function<double(std::size_t, double)>& allowed = {}) {
  Mismatches m;
  if (got.size() != want.size()) {
    m.count = -1;
    m.first = "sizes differ";
    return m;
  }
  std::ostringstream os;
  os.precision(9);
  for (std::size_t i = 0; i < got.size(); ++i) {
    bool ok = same_bits(got[i], want[i]) || (is_nan(got[i]) && is_nan(want[i]));
    if (!ok && allowed && !is_nan(got[i]) && !is_nan(want[i])) {
      const double g = as_double(got[i]), w = as_double(want[i]);
      ok = g == w || std::fabs(g - w) <= allowed(i, w);
    }
    if (ok) continue;
    if (m.count++ < 5) os << " [" << i << "] got " << as_double(got[i]) << ", want " << as_double(want[i]) << ";";
  }
  m.first = os.str();
  return m;
}

// Checks `got` against `want` and says which run it was when they differ.
template <class T>
void expect_match(const std::string& what, const std::vector<T>& got, const std::vector<T>& want,
                  const std::function<double(std::size_t, double)>& allowed = {}) {
  const Mismatches m = compare(got, want, allowed);
  INFO(what << ": " << m.count << " of " << want.size() << " elements differ:" << m.first);
  CHECK(m.count == 0);
}

// A relative bound: |got - want| <= tol * (|want| + floor).
inline std::function<double(std::size_t, double)> relative(double tol, double floor = 0) {
  return [=](std::size_t, double w) { return tol * (std::fabs(w) + floor); };
}

// Runs `run(executor, num_warps)` (which launches the kernel and returns its outputs) on the
// interpreter once and on Host for every warp count and on Host64 for `warps64`; `check(label,
// got, want)` compares each host run with the interpreter's. The interpreter ignores num_warps.
template <class Run, class Check>
void against_interpreter(const std::string& label, Run&& run, Check&& check, std::span<const int> warps32,
                         std::span<const int> warps64) {
  enable_host();
  const auto want = run(ts::Executor::Interpreter, 4);
  for (auto [ex, warps] : {std::pair{ts::Executor::Host, warps32}, std::pair{ts::Executor::Host64, warps64}})
    for (int w : warps) {
      const std::string what = label + ", " + executor_name(ex) + ", num_warps " + std::to_string(w);
      check(what, run(ex, w), want);
    }
}

}  // namespace host_test

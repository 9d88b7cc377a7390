// Math functions on f32 against the C library in double, within the bounds the README ("Math")
// states for tessera (Triton states none: its tl.exp etc. are libdevice or MUFU approximations);
// and the sum/max/min reductions for every element type.
#include "conformance.hpp"

using namespace conf;

namespace {

enum MathOp : int { Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Sin, Cos, Tanh, Sigmoid, Erf, Floor, Ceil, Abs };

struct MathSpec {
  const char* name;
  double (*ref)(double);
  // |got - ref| <= ulps * ulp(ref) + abs + rel(x) * |ref|; ulps < 0: exact (bit for bit, ±0 too).
  double ulps, abs;
  double (*rel)(double x);
  bool small_args_only;  // sin, cos: |x| <= 100, the README's stated range
};
double no_rel(double) { return 0; }
double exp_rel(double x) { return std::fabs(x * 1.4426950408889634) * 0x1p-24; }  // README: exp, sigmoid
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double rsqrt(double x) { return 1 / std::sqrt(x); }

const MathSpec kMath[] = {
    {"exp", [](double x) { return std::exp(x); }, 2, 0, exp_rel, false},
    {"exp2", [](double x) { return std::exp2(x); }, 2, 0, no_rel, false},
    {"log", [](double x) { return std::log(x); }, 2, 0x1p-21, no_rel, false},
    {"log2", [](double x) { return std::log2(x); }, 2, 0x1p-21, no_rel, false},
    {"sqrt", [](double x) { return std::sqrt(x); }, -1, 0, no_rel, false},
    {"rsqrt", rsqrt, 2, 0, no_rel, false},
    {"sin", [](double x) { return std::sin(x); }, 2, 0x1p-24, no_rel, true},
    {"cos", [](double x) { return std::cos(x); }, 2, 0x1p-24, no_rel, true},
    {"tanh", [](double x) { return std::tanh(x); }, 4, 0, no_rel, false},
    {"sigmoid", sigmoid, 3, 0, exp_rel, false},
    {"erf", [](double x) { return std::erf(x); }, 4, 0, no_rel, false},
    {"floor", [](double x) { return std::floor(x); }, -1, 0, no_rel, false},
    {"ceil", [](double x) { return std::ceil(x); }, -1, 0, no_rel, false},
    {"abs", [](double x) { return std::fabs(x); }, -1, 0, no_rel, false},
};

std::vector<float> math_inputs(bool small_args_only) {
  std::vector<float> v;
  for (float x : edge_values<float>())
    if (!small_args_only || !std::isfinite(x) || std::fabs(x) <= 100) v.push_back(x);
  for (int k = -64; k <= 64; ++k) v.push_back(static_cast<float>(k) * 0.3125f + 0.0078125f);  // [-20, 20]
  for (float x : {1e-30f, 1e-5f, 0.1f, 0.7f, 2.0f, 10.0f, 88.5f, -87.0f, -103.0f, 1e5f, 1e30f, -1e-5f})
    if (!small_args_only || std::fabs(x) <= 100) v.push_back(x);
  return v;
}

TEST_CASE("conformance: f32 math functions", "[conformance][math]") {
  auto kernel = ts::kernel("conformance_math", [](ts::Ptr<float> a, ts::Ptr<float> out) {
    const auto offs = ts::arange(0, ts::meta("BLOCK"));
    const auto x = ts::load(a + offs);
    ts::Float r;
    switch (static_cast<int>(ts::meta("OP"))) {
      case Exp: r = ts::exp(x); break;
      case Exp2: r = ts::exp2(x); break;
      case Log: r = ts::log(x); break;
      case Log2: r = ts::log2(x); break;
      case Sqrt: r = ts::sqrt(x); break;
      case Rsqrt: r = ts::rsqrt(x); break;
      case Sin: r = ts::sin(x); break;
      case Cos: r = ts::cos(x); break;
      case Tanh: r = ts::tanh(x); break;
      case Sigmoid: r = ts::sigmoid(x); break;
      case Erf: r = ts::erf(x); break;
      case Floor: r = ts::floor(x); break;
      case Ceil: r = ts::ceil(x); break;
      default: r = ts::abs(x); break;
    }
    ts::store(out + offs, r);
  });
  for (int op = Exp; op <= Abs; ++op) {
    const MathSpec& s = kMath[op];
    const auto xs = math_inputs(s.small_args_only);
    Case c(std::string(s.name) + " f32" + (s.ulps < 0 ? " (exact)" : " (within " + std::to_string(int(s.ulps)) + " ulp)"));
    auto da = device_buffer(padded(xs, 1.0f));
    ts::Buffer<float> dout(da.size(), executor());
    kernel[options(xs.size(), op)](da, dout);
    const auto out = dout.to_host();
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double ref = s.ref(xs[i]);
      const float got = out[i];
      const std::string in = std::string(s.name) + "(" + show(xs[i]) + ")";
      if (s.ulps < 0 || !std::isfinite(xs[i]) || std::isnan(ref) || std::isinf(round_to<float>(ref))) {
        // Exact ops, NaN / ±inf arguments (exp(-inf) = +0, tanh(inf) = 1) and NaN / ±inf results
        // (exp(100), log(0), sqrt(-1), sin(inf)): bit for bit.
        c.check_value(got, round_to<float>(ref), in);
        continue;
      }
      // ulp of the f32 result's binade (subnormals: 2^-149).
      const double ulp = std::ldexp(1.0, std::max(ref == 0 ? -126 : std::ilogb(ref), -126) - 23);
      const double bound = s.ulps * ulp + s.abs + s.rel(xs[i]) * std::fabs(ref);
      c.check(std::isfinite(got) && std::fabs(double(got) - ref) <= bound, [&] {
        return in + " -> got " + show(got) + ", libm (double) " + show(ref) + ", bound " + show(bound);
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Reductions: ts::sum / ts::max / ts::min of a 1-D tile of 128 elements to a scalar.

// Triton's result types (standard.py): sum: ints narrower than 32 bits in i32 (signed) or u32
// (unsigned), floats unchanged (_pick_sum_dtype); max/min: bf16 promoted to f32 and anything
// narrower than 32 bits to f32 or i32. tessera's: reduce.hpp (sum_type, max_type), which must agree.
template <class T>
std::string triton_sum_type() {
  if constexpr (is_int_v<T> && sizeof(T) < 4) return std::is_signed_v<T> ? "i32" : "u32";
  else return name_of<T>();
}
template <class T>
std::string triton_max_type() {
  if constexpr (sizeof(T) < 4) return is_float_v<T> ? "f32" : "i32";
  else return name_of<T>();
}

template <class T>
void run_reductions() {
  using S = ts::detail::sum_type<T>;
  using M = ts::detail::max_type<T>;
  auto kernel = ts::kernel("conformance_reduce", [](ts::Ptr<T> a, ts::Ptr<S> sum, ts::Ptr<M> mx) {
    const auto x = ts::load(a + ts::arange(0, 128));
    ts::store(sum, ts::sum(x, 0));
    ts::store(mx, static_cast<int>(ts::meta("OP")) == 0 ? ts::max(x, 0) : ts::min(x, 0));
  });
  constexpr std::size_t n = 128;
  // Data sets: values from the edge list spread by a fixed LCG (ints wrap when summed); floats
  // finite only, and then with a NaN, with +inf, with +inf and -inf.
  std::vector<std::vector<T>> sets;
  std::vector<T> pool;
  for (const T& v : edge_values<T>())
    if constexpr (is_float_v<T>) {
      if (std::isfinite(to_ld(v)) && std::fabs(to_ld(v)) < 1e4L) pool.push_back(v);
    } else {
      pool.push_back(v);
    }
  std::uint32_t state = 12345;
  std::vector<T> base(n);
  for (auto& v : base) {
    state = state * 1664525u + 1013904223u;
    v = pool[(state >> 8) % pool.size()];
  }
  sets.push_back(base);
  if constexpr (is_float_v<T>) {
    auto with = [&](std::initializer_list<long double> specials) {
      auto s = base;
      std::size_t at = 5;
      for (long double v : specials) s[at += 37] = round_to<T>(v);
      sets.push_back(s);
    };
    with({(long double)NAN});
    with({(long double)INFINITY});
    with({(long double)INFINITY, -(long double)INFINITY});
  }
  const std::string tn = name_of<T>();
  for (std::size_t k = 0; k < sets.size(); ++k) {
    const auto& xs = sets[k];
    const std::string set_name = k == 0 ? "" : k == 1 ? " with NaN" : k == 2 ? " with +inf" : " with +inf, -inf";
    auto da = device_buffer(xs);
    ts::Buffer<S> dsum(1, executor());
    ts::Buffer<M> dmx(1, executor());
    for (int op = 0; op < 2; ++op) {
      kernel[options(n, op)](da, dsum, dmx);
      const M got = dmx.to_host()[0];
      // max/min: exact in any order; a NaN is skipped (maxnum/minnum, Triton's tl.maximum default).
      T want{};
      bool first = true;
      for (const T& v : xs) {
        if (is_nan(v)) continue;
        if (first || (op == 0 ? to_ld(v) > to_ld(want) : to_ld(v) < to_ld(want))) want = v;
        first = false;
      }
      const std::string mn = name_of<M>();
      Case c(std::string(op == 0 ? "max " : "min ") + tn + set_name + " -> " + mn);
      if (triton_max_type<T>() != mn) c.fail("result type " + mn + ", Triton's " + triton_max_type<T>());
      c.check_value(got, cast_ref<M>(want), std::string(op == 0 ? "max" : "min") + " of 128 " + tn, /*zero_sign=*/false);
      if (op == 1) continue;
      // sum: ints exact with wraparound in S; floats in any order, within (n-1)·u·Σ|x| of the exact
      // sum (u: S's unit roundoff), NaN for a NaN or for +inf with -inf, +inf with +inf alone.
      const std::string sn = name_of<S>();
      Case cs("sum " + tn + set_name + " -> " + sn);
      if (triton_sum_type<T>() != sn) cs.fail("result type " + sn + ", Triton's " + triton_sum_type<T>());
      const S gs = dsum.to_host()[0];
      if constexpr (is_int_v<S>) {
        std::uint64_t acc = 0;
        for (const T& v : xs) acc += static_cast<std::uint64_t>(static_cast<S>(v));
        cs.check_value(gs, static_cast<S>(acc), "sum of 128 " + tn);
      } else {
        long double exact = 0, mag = 0;
        for (const T& v : xs) exact += to_ld(v), mag += std::fabs(to_ld(v));
        if (std::isnan(exact) || std::isinf(exact)) {
          cs.check_value(gs, round_to<S>(exact), "sum of 128 " + tn);
        } else {
          const long double bound = (n - 1) * std::ldexp(1.0L, -format_of<S>().p) * mag;
          cs.check(std::fabs(to_ld(gs) - exact) <= bound, [&] {
            return "sum of 128 " + tn + " -> got " + show(gs) + ", exact " + std::to_string((double)exact) + ", bound " + std::to_string((double)bound);
          });
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("conformance: sum max min reductions", "[conformance][reduce]") {
  for_each_type<AllTypes>([](auto t) { run_reductions<typename decltype(t)::type>(); });
}

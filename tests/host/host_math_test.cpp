// Math on the host targets against the interpreter, element by element. The host target computes
// exp, exp2, log, log2, sqrt, rsqrt, sigmoid, floor, ceil and fma as the interpreter does (libm's
// f32 functions, IEEE arithmetic): bit for bit. sin, cos, tanh, erf and pow in f32 are tessera's own
// implementations (jit/lower/lower_math.cpp, what AMD GPUs, and NVIDIA ones without libdevice, run):
// within README's bounds for them ("Math", the "own" column, as tests/gpu/math_gpu_test.cpp holds
// them on the GPU) plus one ulp for the interpreter's libm. f16 and bf16 compute in f32 and round
// once, so the own functions may land one ulp of the narrow type apart. f64 is libm on both sides.
// fast_expf, fast_exp2f and fast_dividef are exp, exp2 and `/` there (their fast forms are NVIDIA's only).
#include "host_test_util.hpp"

using namespace host_test;

namespace {

const std::vector<std::string> kOps = {"exp",  "exp2",    "log", "log2",  "sqrt", "rsqrt", "sin",       "cos",
                                       "tanh", "sigmoid", "erf", "floor", "ceil", "pow",   "fma",       "fast_expf",
                                       "fast_exp2f", "fast_dividef"};

// fast_expf, fast_exp2f and fast_dividef take f32 only: exactly exp, exp2 and `/` on the host targets, as on the interpreter.
bool f32_only(const std::string& op) { return op.starts_with("fast_"); }

std::int64_t op_index(const std::string& name) {
  return std::find(kOps.begin(), kOps.end(), name) - kOps.begin();
}

template <class T>
auto make_math() {
  return ts::kernel("math", [](ts::Ptr<T> xp, ts::Ptr<T> yp, ts::Ptr<T> out, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    const std::string& op = kOps.at(static_cast<std::size_t>(ts::meta("OP")));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto x = ts::load(xp + offs, mask, 1.0);
    auto y = ts::load(yp + offs, mask, 1.0);
    ts::Tile<T> r;
    if (op == "exp") r = ts::exp(x);
    else if (op == "exp2") r = ts::exp2(x);
    else if (op == "log") r = ts::log(x);
    else if (op == "log2") r = ts::log2(x);
    else if (op == "sqrt") r = ts::sqrt(x);
    else if (op == "rsqrt") r = ts::rsqrt(x);
    else if (op == "sin") r = ts::sin(x);
    else if (op == "cos") r = ts::cos(x);
    else if (op == "tanh") r = ts::tanh(x);
    else if (op == "sigmoid") r = ts::sigmoid(x);
    else if (op == "erf") r = ts::erf(x);
    else if (op == "floor") r = ts::floor(x);
    else if (op == "ceil") r = ts::ceil(x);
    else if (op == "pow") r = ts::pow(x, y);
    else if (f32_only(op)) {
      if constexpr (std::is_same_v<T, float>)
        r = op == "fast_expf" ? ts::fast_expf(x) : op == "fast_exp2f" ? ts::fast_exp2f(x) : ts::fast_dividef(x, y);
      else throw std::logic_error(op + " takes f32 tiles only");
    }
    else r = ts::fma(x, y, x);
    ts::store(out + offs, r, mask);
  });
}

struct Range {
  double lo, hi, lo2 = 1, hi2 = 1;
};

Range range_of(const std::string& op) {
  if (op == "exp" || op == "fast_expf" || op == "sigmoid" || op == "tanh") return {-10, 10};
  if (op == "fast_dividef") return {-100, 100, 0.25, 64};
  if (op == "exp2" || op == "fast_exp2f") return {-20, 20};
  if (op == "log" || op == "log2" || op == "sqrt" || op == "rsqrt") return {1e-3, 1e3};
  if (op == "sin" || op == "cos") return {-100, 100};
  if (op == "erf") return {-5, 5};
  if (op == "floor" || op == "ceil") return {-1e4, 1e4};
  if (op == "pow") return {0.1, 10, -4, 4};
  return {-100, 100, -100, 100};  // fma
}

// How far the host may be from the interpreter where the second operand is y and the interpreter's
// result is `want`.
template <class T>
double allowed(const std::string& op, double y, double want) {
  const double u = ulp_of<T>(want);
  const bool own_f32 = !std::is_same_v<T, double> &&
                       (op == "sin" || op == "cos" || op == "tanh" || op == "erf" || op == "pow");
  if (!own_f32) return 0;  // computed as the interpreter computes it
  if constexpr (!std::is_same_v<T, float>) return u;  // one rounding of the narrow type apart
  if (op == "sin" || op == "cos") return 3 * u + std::ldexp(1.0, -24);
  if (op == "pow") return 3 * u + std::fabs(y) * std::ldexp(1.0, -21) * std::fabs(want);
  return 5 * u;  // tanh, erf: 4 ulp, and the interpreter's own
}

template <class T>
void check_math(const std::string& op, std::span<const int> warps32, std::span<const int> warps64,
                std::span<const std::int64_t> sizes) {
  auto k = make_math<T>();
  const Range rg = range_of(op);
  for (std::int64_t n : sizes) {
    if (skip_when_sanitized(n)) continue;
    std::mt19937 rng(kSeed + static_cast<std::uint32_t>(op_index(op) * 1000 + n));
    const auto x = random_values<T>(n, rng, rg.lo, rg.hi), y = random_values<T>(n, rng, rg.lo2, rg.hi2);
    auto run = [&](ts::Executor e, int warps) {
      auto out = poisoned<T>(n);
      const int block = block_for(e, warps, n, sizeof(T));
      k[{.grid = {ts::cdiv(n, block)}, .meta = {{"BLOCK", block}, {"OP", op_index(op)}}, .num_warps = warps,
         .executor = e}](x, y, out, static_cast<std::int32_t>(n));
      return out;
    };
    against_interpreter(op + " on " + type_name<T>() + ", n = " + std::to_string(n), run,
                        [&](const std::string& what, const std::vector<T>& got, const std::vector<T>& want) {
                          expect_match(what, got, want, [&](std::size_t i, double w) {
                            return allowed<T>(op, as_double(y[i]), w);
                          });
                        },
                        warps32, warps64);
  }
}

constexpr int kWarps32[] = {1, 4, 32};
constexpr int kWarps64[] = {2};
constexpr int kOneWarps[] = {4};
constexpr std::int64_t kMathSizes[] = {1, 1000, 100003};
constexpr std::int64_t kSmallSizes[] = {1000};

}  // namespace

TEST_CASE("f32 math on the host targets matches the interpreter within the own-math bounds", "[host][math]") {
  for (const std::string& op : kOps) check_math<float>(op, kWarps32, kWarps64, kMathSizes);
}

TEST_CASE("f16 and bf16 math on the host targets match the interpreter within one ulp", "[host][math][f16]") {
  for (const std::string& op : kOps) {
    if (f32_only(op)) continue;
    check_math<ts::half>(op, kOneWarps, kOneWarps, kSmallSizes);
    check_math<ts::bfloat16>(op, kOneWarps, kOneWarps, kSmallSizes);
  }
}

TEST_CASE("f64 math on the host targets matches the interpreter bit for bit", "[host][math]") {
  for (const std::string& op : kOps)
    if (!f32_only(op)) check_math<double>(op, kOneWarps, kOneWarps, kSmallSizes);
}

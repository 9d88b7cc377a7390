// Attention forward (examples/attention_kernels.hpp) on the host targets against the interpreter:
// the first dot's accumulator reduced along its rows (max, sum), rescaled, exponentiated and cast
// as the second dot's left operand, in every lowering of the dots (4 and 8 warps: wgmma, 1 and 2:
// mma.sync, warps of 64: fma loops), causal and not, num_stages 1 to 3, a sequence length no block
// divides, and against a double-precision reference. The backward (the forward with its lse, delta,
// dK/dV, dQ: four dots a step, two of them on a computed left operand) the same way.
#include "examples/attention_kernels.hpp"
#include "host_test_util.hpp"

using namespace host_test;
namespace ex = tessera_examples;

namespace {

template <class In>
void check_attention(bool causal, int num_stages, std::int64_t n = 100, float scale = 0x1.6a09e6p-3f /* 1/sqrt(32) */) {
  // n = 100: the last key block partial; n = 128: every one whole (EVEN, no key mask). A scale
  // above 0 takes the row max before the scale (SCALE_POSITIVE), another the scaled scores.
  auto kernel = ex::make_attention<In>();
  constexpr std::int64_t heads = 2, d = 32;
  // num_stages >= 2: Q stored into shared memory once, K and V copied into rings (pipeline_loads).
  const ex::AttentionConfig cfg{.block_m = 64, .block_n = 32, .num_stages = num_stages};
  std::mt19937 rng(kSeed);
  const auto count = static_cast<std::size_t>(heads * n * d);
  const auto q = random_values<In>(count, rng, -1, 1), k = random_values<In>(count, rng, -1, 1),
             v = random_values<In>(count, rng, -1, 1);
  auto run = [&](ts::Executor e, int warps) {
    auto out = poisoned<In>(count);
    ts::LaunchOptions opts = ex::attention_options(heads, n, d, causal, scale, cfg, e);
    opts.num_warps = warps;
    kernel[opts](q, k, v, out, static_cast<std::int32_t>(n), scale);
    return out;
  };
  const auto reference = ex::attention_reference<In>(q, k, v, heads, n, d, scale, causal);
  std::vector<In> want;
  for (double x : reference) want.push_back(In(static_cast<float>(x)));
  // Against the double reference: a few units of In's rounding (P and O are rounded to In).
  const double eps = std::is_same_v<In, ts::bfloat16> ? 0x1p-8 : 0x1p-11;
  against_interpreter(std::string("attention ") + (causal ? "causal" : "full") + " scale " + std::to_string(scale), run,
                      [&](const std::string& what, const std::vector<In>& got, const std::vector<In>& interp) {
                        // The row sums of P add in a tree over lanes and warps, the interpreter's
                        // left to right: O, rounded to In, may differ by one of its ulps.
                        expect_match(what, got, interp, [](std::size_t, double w) { return ulp_of<In>(w); });
                        expect_match(what + " (interpreter vs double reference)", interp, want,
                                     [&](std::size_t, double) { return 4 * eps; });
                      },
                      std::span<const int>(std::array{1, 2, 4, 8}), std::span<const int>(std::array{1, 4}));
}

// dQ, dK and dV (concatenated) of the four backward kernels run on one executor.
template <class In>
std::vector<In> attention_gradients(ts::Executor e, int warps, std::vector<In> q, std::vector<In> k, std::vector<In> v,
                                    std::vector<In> d_o, std::int64_t heads, std::int64_t n, std::int64_t d,
                                    bool causal, const ex::AttentionConfig& cfg) {
  const auto count = static_cast<std::size_t>(heads * n * d), rows = static_cast<std::size_t>(heads * n);
  auto o = poisoned<In>(count), dq = poisoned<In>(count), dk = poisoned<In>(count), dv = poisoned<In>(count);
  auto lse = poisoned<float>(rows), delta = poisoned<float>(rows);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  ex::attention_forward_backward<In>(
      ex::AttentionTensors<std::vector<In>, std::vector<float>>{q, k, v, o, d_o, dq, dk, dv, lse, delta}, heads, n, d,
      scale, causal, cfg, {cfg, cfg}, e, warps);
  std::vector<In> grads = dq;
  grads.insert(grads.end(), dk.begin(), dk.end());
  grads.insert(grads.end(), dv.begin(), dv.end());
  return grads;
}

template <class In>
void check_attention_backward(bool causal, int num_stages, std::int64_t n = 100) {
  // n = 100: the last query and key blocks partial; n = 128: every one whole (EVEN, no masks).
  constexpr std::int64_t heads = 2, d = 32;
  const ex::AttentionConfig cfg{.block_m = 64, .block_n = 32, .num_stages = num_stages};
  std::mt19937 rng(kSeed);
  const auto count = static_cast<std::size_t>(heads * n * d);
  const auto q = random_values<In>(count, rng, -1, 1), k = random_values<In>(count, rng, -1, 1),
             v = random_values<In>(count, rng, -1, 1), d_o = random_values<In>(count, rng, -1, 1);
  auto run = [&](ts::Executor e, int warps) { return attention_gradients<In>(e, warps, q, k, v, d_o, heads, n, d, causal, cfg); };
  const auto ref = ex::attention_backward_reference<In>(q, k, v, d_o, heads, n, d, 1.0 / std::sqrt(double(d)), causal);
  std::vector<double> want = ref.dq;
  want.insert(want.end(), ref.dk.begin(), ref.dk.end());
  want.insert(want.end(), ref.dv.begin(), ref.dv.end());
  double largest = 0;
  for (double x : want) largest = std::max(largest, std::abs(x));
  // P and dS are rounded to In before the dots that take them, and the gradients when stored;
  // the lanes add in another order than the interpreter: a few units of In's rounding of the
  // largest gradient bound both differences.
  const double eps = std::is_same_v<In, ts::bfloat16> ? 0x1p-8 : 0x1p-11;
  against_interpreter(std::string("attention backward ") + (causal ? "causal" : "full"), run,
                      [&](const std::string& what, const std::vector<In>& got, const std::vector<In>& interp) {
                        expect_match(what, got, interp, [&](std::size_t, double) { return 2 * eps * largest; });
                        std::vector<In> rounded;
                        for (double x : want) rounded.push_back(In(static_cast<float>(x)));
                        expect_match(what + " (interpreter vs double reference)", interp, rounded,
                                     [&](std::size_t, double) { return 4 * eps * largest; });
                      },
                      std::span<const int>(std::array{1, 2, 4, 8}), std::span<const int>(std::array{1, 4}));
}

}  // namespace

TEST_CASE("attention forward f16 on the host targets matches the interpreter", "[host][dot][attention]") {
  check_attention<ts::half>(false, 2);
  check_attention<ts::half>(true, 1);
  check_attention<ts::half>(false, 2, 128);
}

TEST_CASE("attention forward bf16 on the host targets matches the interpreter", "[host][dot][attention]") {
  check_attention<ts::bfloat16>(false, 3);
  check_attention<ts::bfloat16>(true, 2);
  check_attention<ts::bfloat16>(true, 2, 128);
}

TEST_CASE("attention forward with a scale of zero or below takes the scaled scores' max", "[host][dot][attention]") {
  // A negative scale flips which product is the row's max; zero makes every seen key equally
  // likely (and a masked score's -inf * 0 would be NaN were the mask applied before the scale).
  check_attention<ts::half>(false, 2, 100, -0.3f);
  check_attention<ts::half>(true, 2, 100, -0.3f);
  check_attention<ts::bfloat16>(true, 1, 100, 0.0f);
  check_attention<ts::half>(false, 2, 128, 0.0f);
}

TEST_CASE("attention backward f16 on the host targets matches the interpreter", "[host][dot][attention]") {
  check_attention_backward<ts::half>(false, 2);
  check_attention_backward<ts::half>(true, 1);
  check_attention_backward<ts::half>(false, 2, 128);
}

TEST_CASE("attention backward bf16 on the host targets matches the interpreter", "[host][dot][attention]") {
  check_attention_backward<ts::bfloat16>(false, 3);
  check_attention_backward<ts::bfloat16>(true, 2);
  check_attention_backward<ts::bfloat16>(true, 2, 128);
}

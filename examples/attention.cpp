// Attention forward (Triton's tutorial 06) in f16 and bf16, causal and not, over a sequence length
// that is not a multiple of the blocks. Checks itself against a double-precision host reference.
//   attention [HEADS N HEAD_D]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "attention_kernels.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;

template <class In>
bool run(const char* what, std::int64_t heads, std::int64_t n, std::int64_t d, bool causal) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const auto count = static_cast<std::size_t>(heads * n * d);
  std::vector<In> hq(count), hk(count), hv(count);
  for (auto* t : {&hq, &hk, &hv})
    for (auto& x : *t) x = In(dist(rng));
  auto q = ts::Buffer<In>::from_host(hq);
  auto k = ts::Buffer<In>::from_host(hk);
  auto v = ts::Buffer<In>::from_host(hv);
  auto o = ts::Buffer<In>::from_host(std::vector<In>(count, In(-7.f)));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  auto attention = ex::make_attention<In>();
  const ex::AttentionConfig cfg{.block_m = 64, .block_n = 32, .num_warps = 4};
  attention[ex::attention_options(heads, n, d, causal, scale, cfg)](q, k, v, o, static_cast<std::int32_t>(n), scale);
  ts::synchronize();
  const auto got = o.to_host();
  const auto want = ex::attention_reference<In>(hq, hk, hv, heads, n, d, scale, causal);
  // |O| <= 1 (a weighted mean of V). P is rounded to In before the second dot and O to In when
  // stored: a few units of In's rounding (2^-11 for f16, 2^-8 for bf16) bound the error.
  const double eps = std::is_same_v<In, ts::bfloat16> ? 0x1p-8 : 0x1p-11;
  const double bound = 4 * eps;
  std::int64_t bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const double err = std::abs(static_cast<double>(static_cast<float>(got[i])) - want[i]);
    worst = std::max(worst, err);
    if (!(err <= bound)) bad += 1;
  }
  std::printf("%s %s %s heads %lld, n %lld, head_dim %lld: worst abs error %.3g (bound %.3g), %lld elements off\n",
              bad ? "FAILED" : "OK", what, causal ? "causal" : "full", static_cast<long long>(heads),
              static_cast<long long>(n), static_cast<long long>(d), worst, bound, static_cast<long long>(bad));
  return bad == 0;
}

int main(int argc, char** argv) {
  const std::int64_t heads = argc > 1 ? std::atoll(argv[1]) : 2, n = argc > 2 ? std::atoll(argv[2]) : 100,
                     d = argc > 3 ? std::atoll(argv[3]) : 64;
  try {
    std::printf("tessera attention, running on: %s\n", ts::default_executor().description.c_str());
    bool ok = true;
    for (bool causal : {false, true}) {
      ok &= run<ts::half>("f16", heads, n, d, causal);
      ok &= run<ts::bfloat16>("bf16", heads, n, d, causal);
    }
    return ok ? 0 : 1;
  } catch (const ts::Error& e) {
    std::printf("tessera error: %s\n", e.what());
    return 1;
  }
}

// Attention backward (FlashAttention-2's, as Triton's tutorial 06) in f16 and bf16, causal and
// not, over a sequence length that is not a multiple of the blocks: the forward with its row
// log-sum-exp, then delta, dK and dV, dQ. Checks dQ, dK and dV against a double-precision host
// reference.
//   attention_bwd [HEADS N HEAD_D]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "attention_kernels.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;

// The worst |got - want| over max |want| of one gradient.
template <class In>
double relative_error(const std::vector<In>& got, const std::vector<double>& want) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(static_cast<float>(got[i])) - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return worst / scale;
}

template <class In>
bool run(const char* what, std::int64_t heads, std::int64_t n, std::int64_t d, bool causal,
         const ex::AttentionConfig& cfg) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const auto count = static_cast<std::size_t>(heads * n * d), rows = static_cast<std::size_t>(heads * n);
  std::vector<In> hq(count), hk(count), hv(count), hdo(count);
  for (auto* t : {&hq, &hk, &hv, &hdo})
    for (auto& x : *t) x = In(dist(rng));
  auto q = ts::Buffer<In>::from_host(hq);
  auto k = ts::Buffer<In>::from_host(hk);
  auto v = ts::Buffer<In>::from_host(hv);
  auto d_o = ts::Buffer<In>::from_host(hdo);
  auto o = ts::Buffer<In>::from_host(std::vector<In>(count, In(-7.f)));
  auto lse = ts::Buffer<float>::from_host(std::vector<float>(rows, -7.f));
  auto delta = ts::Buffer<float>::from_host(std::vector<float>(rows, -7.f));
  auto dq = ts::Buffer<In>::from_host(std::vector<In>(count, In(-7.f)));
  auto dk = ts::Buffer<In>::from_host(std::vector<In>(count, In(-7.f)));
  auto dv = ts::Buffer<In>::from_host(std::vector<In>(count, In(-7.f)));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  ex::attention_forward_backward<In>(ex::AttentionTensors<ts::Buffer<In>, ts::Buffer<float>>{q, k, v, o, d_o, dq, dk, dv,
                                                                                            lse, delta},
                                     heads, n, d, scale, causal, cfg, {cfg, cfg}, ts::Executor::Auto);
  ts::synchronize();
  const auto want = ex::attention_backward_reference<In>(hq, hk, hv, hdo, heads, n, d, scale, causal);
  // P and dS are rounded to In before the dots that take them, O (in delta) and the gradients
  // when stored: a few units of In's rounding (2^-11 for f16, 2^-8 for bf16) of the largest
  // gradient bound the error.
  const double eps = std::is_same_v<In, ts::bfloat16> ? 0x1p-8 : 0x1p-11;
  const double bound = 4 * eps;
  const double errors[] = {relative_error(dq.to_host(), want.dq), relative_error(dk.to_host(), want.dk),
                           relative_error(dv.to_host(), want.dv)};
  const bool ok = std::all_of(std::begin(errors), std::end(errors), [&](double e) { return e <= bound; });
  std::printf("%s %s %s heads %lld, n %lld, head_dim %lld, blocks %lldx%lld: worst error / max |gradient|: dQ %.3g, "
              "dK %.3g, dV %.3g (bound %.3g)\n",
              ok ? "OK" : "FAILED", what, causal ? "causal" : "full", static_cast<long long>(heads),
              static_cast<long long>(n), static_cast<long long>(d), static_cast<long long>(cfg.block_m),
              static_cast<long long>(cfg.block_n), errors[0], errors[1], errors[2], bound);
  return ok;
}

int main(int argc, char** argv) {
  const std::int64_t heads = argc > 1 ? std::atoll(argv[1]) : 2, n = argc > 2 ? std::atoll(argv[2]) : 100,
                     d = argc > 3 ? std::atoll(argv[3]) : 32;
  try {
    std::printf("tessera attention backward, running on: %s\n", ts::default_executor().description.c_str());
    bool ok = true;
    // Query and key blocks of one size, and of two (the causal dK/dV loop starts at the query
    // block holding the program's first key).
    for (const ex::AttentionConfig cfg : {ex::AttentionConfig{.block_m = 32, .block_n = 32, .num_warps = 4},
                                          ex::AttentionConfig{.block_m = 64, .block_n = 32, .num_warps = 4}})
      for (bool causal : {false, true}) {
        ok &= run<ts::half>("f16", heads, n, d, causal, cfg);
        ok &= run<ts::bfloat16>("bf16", heads, n, d, causal, cfg);
      }
    return ok ? 0 : 1;
  } catch (const ts::Error& e) {
    std::printf("tessera error: %s\n", e.what());
    return 1;
  }
}

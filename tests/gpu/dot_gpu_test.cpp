// dot on the GPU (the matmul example's kernel) against the interpreter, element by element, with
// poisoned outputs: f16 and bf16 (wgmma on sm_90a where the tile allows, else mma.sync and
// ldmatrix), f32 (tf32 and tf32x3 on mma.sync, ieee in fma loops) and i8 (mma.sync), blocks from 16 x 16 to 128 x 256, sizes that are and are not
// multiples of the blocks, B row- and column-major, num_warps 4 and 8, num_stages 1 to 5, and
// chained dots (an accumulator cast to 16 bits as the next dot's left operand) and attention's
// forward pass, on the device's own
// target; tests/gpu/device_run.sh runs the [dot] cases again with
// TESSERA_CUDA_ARCH=sm_80 (mma.sync code on the H200). The tensor cores sum in their own order,
// so floats compare within a bound per element.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "examples/attention_kernels.hpp"
#include "examples/matmul_kernels.hpp"

namespace ts = tessera;
namespace ex = tessera_examples;

namespace {

struct DotCase {
  std::int64_t m, n, k;
  ex::MatmulConfig cfg;
  bool b_transposed;
  bool tensor_core_tile = false;  // not for 4-byte operands: they would overflow shared memory
  bool a_transposed = false;      // A column-major (M contiguous): wgmma's transposed A on sm_90a
};

// P: the input precision of f32 operands. tf32's operands are truncated alike on both sides; tf32x3
// is held to the interpreter's f32 products ("ieee") within the same bound as the rest, which
// plain tf32 would not meet (about 2^-11 per product).
template <class In, class Out, ts::InputPrecision P = ts::InputPrecision::tf32>
void check_gpu_dot(double lo, double hi) {
  auto matmul = ex::make_matmul<In, Out, P>("dot_gpu_test");
  const DotCase cases[] = {
      {16, 16, 16, {.block_m = 16, .block_n = 16, .block_k = 16, .group_m = 1, .num_warps = 4}, false},
      {300, 200, 100, {.block_m = 64, .block_n = 64, .block_k = 32, .group_m = 4, .num_warps = 4}, true},
      {512, 512, 256, {.block_m = 128, .block_n = 128, .block_k = 32, .group_m = 8, .num_warps = 8}, false},
      {777, 555, 333, {.block_m = 128, .block_n = 64, .block_k = 64, .group_m = 8, .num_warps = 4}, false},
      {1000, 1000, 1000, {.block_m = 128, .block_n = 128, .block_k = 64, .group_m = 8, .num_warps = 8}, true},
      // B column-major with K a multiple of 16 (vector loads along K) through the cp.async ring.
      {512, 256, 128, {.block_m = 64, .block_n = 64, .block_k = 32, .group_m = 4, .num_warps = 4, .num_stages = 3}, true},
      // wgmma tiles on sm_90a (mma.sync under TESSERA_CUDA_ARCH=sm_80): the widest N, operands
      // staged from registers (1 stage), 2 to 5 stages, a K-major B with 32- and 64-element rows.
      {1024, 768, 512, {.block_m = 128, .block_n = 256, .block_k = 64, .group_m = 8, .num_warps = 8, .num_stages = 3}, false, true},
      {500, 300, 200, {.block_m = 64, .block_n = 128, .block_k = 64, .group_m = 4, .num_warps = 4, .num_stages = 1}, false, true},
      {640, 640, 320, {.block_m = 128, .block_n = 128, .block_k = 64, .group_m = 8, .num_warps = 4, .num_stages = 5}, false, true},
      {384, 256, 192, {.block_m = 128, .block_n = 64, .block_k = 32, .group_m = 2, .num_warps = 4, .num_stages = 2}, true, true},
      {256, 512, 256, {.block_m = 128, .block_n = 128, .block_k = 64, .group_m = 8, .num_warps = 8, .num_stages = 4}, true, true},
      // A column-major, as a matmul's backward pass reads Aᵀ for dB: staged (1 stage), through
      // rings of 2 to 4 stages, with B column-major too, and M odd (copies scattered).
      {1024, 512, 768, {.block_m = 128, .block_n = 128, .block_k = 64, .group_m = 8, .num_warps = 8, .num_stages = 4}, false, true, true},
      {500, 300, 200, {.block_m = 64, .block_n = 128, .block_k = 64, .group_m = 4, .num_warps = 4, .num_stages = 1}, false, true, true},
      {384, 256, 192, {.block_m = 128, .block_n = 64, .block_k = 32, .group_m = 2, .num_warps = 4, .num_stages = 2}, true, true, true},
      {333, 256, 256, {.block_m = 128, .block_n = 128, .block_k = 64, .group_m = 8, .num_warps = 8, .num_stages = 3}, false, true, true},
  };
  for (const DotCase& c : cases) {
    if (c.tensor_core_tile && sizeof(In) == 4) continue;
    ex::MatmulShape s{c.m, c.n, c.k, c.k, 1, c.n, 1, c.n, 1};
    if (c.b_transposed) s.stride_bk = 1, s.stride_bn = c.k;
    if (c.a_transposed) s.stride_am = 1, s.stride_ak = c.m;
    std::mt19937 rng(static_cast<std::uint32_t>(c.m * 31 + c.k));
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<In> a(static_cast<std::size_t>(c.m * c.k)), b(static_cast<std::size_t>(c.k * c.n));
    for (auto& v : a) v = static_cast<In>(std::is_integral_v<In> ? std::round(dist(rng)) : dist(rng));
    for (auto& v : b) v = static_cast<In>(std::is_integral_v<In> ? std::round(dist(rng)) : dist(rng));
    auto run = [&](ts::Executor e) {
      std::vector<Out> out(static_cast<std::size_t>(c.m * c.n));
      std::memset(static_cast<void*>(out.data()), 0x7f, out.size() * sizeof(Out));
      auto da = ts::Buffer<In>::from_host(a, e), db = ts::Buffer<In>::from_host(b, e);
      auto dc = ts::Buffer<Out>::from_host(out, e);
      std::apply([&](auto... sc) { matmul[ex::matmul_options(s, c.cfg, e)](da, db, dc, sc...); }, ex::matmul_scalars(s));
      ts::synchronize(e);
      return dc.to_host();
    };
    const auto gpu = run(ts::Executor::Cuda);
    const auto want = run(ts::Executor::Interpreter);
    INFO(c.m << "x" << c.n << "x" << c.k << " blocks " << c.cfg.block_m << "x" << c.cfg.block_n << "x" << c.cfg.block_k
              << " warps " << c.cfg.num_warps << (c.a_transposed ? " A column-major" : "")
              << (c.b_transposed ? " B column-major" : ""));
    std::int64_t bad = 0;
    std::string first;
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double g = static_cast<double>(gpu[i]), w = static_cast<double>(want[i]);
      // f32 sums of K products of size <= 1 in another order: within K * 2^-22 of each other.
      const double bound = std::is_integral_v<Out> ? 0 : 1e-6 * static_cast<double>(c.k) + 1e-6 * std::abs(w);
      if (!(std::abs(g - w) <= bound)) {
        if (bad++ < 5) first += " [" + std::to_string(i) + "] got " + std::to_string(g) + " want " + std::to_string(w) + ";";
      }
    }
    INFO(bad << " of " << want.size() << " elements differ:" << first);
    CHECK(bad == 0);
  }
}

}  // namespace

TEST_CASE("GPU dot f16 (tensor cores) matches the interpreter", "[gpu][dot]") { check_gpu_dot<ts::half, float>(-1, 1); }
TEST_CASE("GPU dot bf16 (tensor cores) matches the interpreter", "[gpu][dot]") { check_gpu_dot<ts::bfloat16, float>(-1, 1); }
TEST_CASE("GPU dot f32, tf32 (tensor cores) matches the interpreter", "[gpu][dot]") {
  check_gpu_dot<float, float, ts::InputPrecision::tf32>(-1, 1);
}
TEST_CASE("GPU dot f32, tf32x3 (three tensor-core products) is as near f32 products as the bound", "[gpu][dot]") {
  check_gpu_dot<float, float, ts::InputPrecision::tf32x3>(-1, 1);
}
TEST_CASE("GPU dot f32, ieee (fma) matches the interpreter", "[gpu][dot]") {
  check_gpu_dot<float, float, ts::InputPrecision::ieee>(-1, 1);
}
TEST_CASE("GPU dot i8 (tensor cores where K allows) matches the interpreter", "[gpu][dot]") {
  check_gpu_dot<std::int8_t, std::int32_t>(-128, 127);
}

TEST_CASE("GPU dot tf32 reads its operands as the interpreter truncates them, bit for bit", "[gpu][dot]") {
  // A in [1, 2) with every mantissa bit random, B small integers: each product of a truncated A
  // (11 significant bits) and a B is exact, and so is every sum (multiples of 2^-10 below 2^9),
  // whatever the order. The results then differ from the interpreter's exactly where the tensor
  // cores read A otherwise than by dropping its 13 low mantissa bits (rounding them, say).
  auto matmul = ex::make_matmul<float, float>("dot_gpu_tf32_bits");
  constexpr std::int64_t m = 256, n = 192, k = 64;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mantissa(1.f, 2.f);
  std::uniform_int_distribution<int> small(-4, 4);
  std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  for (auto& v : a) v = mantissa(rng);
  for (auto& v : b) v = static_cast<float>(small(rng));
  for (const bool b_transposed : {false, true})
    for (const ex::MatmulConfig cfg : {ex::MatmulConfig{.block_m = 64, .block_n = 64, .block_k = 32, .num_warps = 4},
                                       ex::MatmulConfig{.block_m = 128, .block_n = 64, .block_k = 16, .num_warps = 8, .num_stages = 1}}) {
      ex::MatmulShape s{m, n, k, k, 1, n, 1, n, 1};
      if (b_transposed) s.stride_bk = 1, s.stride_bn = k;
      std::vector<float> bt = b;
      if (b_transposed)
        for (std::int64_t p = 0; p < k; ++p)
          for (std::int64_t j = 0; j < n; ++j) bt[static_cast<std::size_t>(j * k + p)] = b[static_cast<std::size_t>(p * n + j)];
      auto run = [&](ts::Executor e) {
        auto da = ts::Buffer<float>::from_host(a, e), db = ts::Buffer<float>::from_host(bt, e);
        auto dc = ts::Buffer<float>::from_host(std::vector<float>(static_cast<std::size_t>(m * n), std::numeric_limits<float>::quiet_NaN()), e);
        std::apply([&](auto... sc) { matmul[ex::matmul_options(s, cfg, e)](da, db, dc, sc...); }, ex::matmul_scalars(s));
        ts::synchronize(e);
        return dc.to_host();
      };
      const auto gpu = run(ts::Executor::Cuda), want = run(ts::Executor::Interpreter);
      const auto reference = ex::matmul_reference<float>(a, bt, s, /*tf32=*/true);
      std::int64_t bad = 0, bad_reference = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        bad += !(gpu[i] == want[i]);
        bad_reference += !(static_cast<double>(want[i]) == reference[i]);
      }
      INFO((b_transposed ? "B column-major" : "B row-major") << ", blocks " << cfg.block_m << "x" << cfg.block_n << "x"
                                                             << cfg.block_k << ", warps " << cfg.num_warps);
      CHECK(bad == 0);
      CHECK(bad_reference == 0);
    }
}

namespace {

// Chained dots (attention's loop without the softmax, ex::make_chained_dots) on the GPU against the
// interpreter: small integer inputs keep every sum exact in f32 and every Q·Kᵀ exact in 16 bits
// (|s| <= 4 * HEAD_D = 256), so the two must agree bit for bit whatever order the tensor cores sum
// in. Both dots run wgmma where the tile allows whole warpgroups (4 warps, 64 rows), mma.sync
// where it does not (8 warps, 64 rows), and under TESSERA_CUDA_ARCH=sm_80.
template <class In>
void check_gpu_chained_dots() {
  auto kernel = ex::make_chained_dots<In>("chained_dots_gpu_test");
  struct Case {
    std::int64_t n, block_m, block_n;
    int warps, stages;
  };
  const Case cases[] = {{300, 64, 64, 4, 1}, {512, 64, 64, 4, 3}, {300, 128, 64, 8, 2}, {384, 64, 128, 4, 2}, {200, 64, 32, 8, 3}};
  constexpr std::int64_t d = 64;
  for (const Case& c : cases) {
    std::mt19937 rng(static_cast<std::uint32_t>(c.n + c.block_n));
    std::uniform_int_distribution<int> small(-2, 2);
    std::vector<In> q(static_cast<std::size_t>(c.n * d)), k(q.size()), v(q.size());
    for (auto* t : {&q, &k, &v})
      for (auto& x : *t) x = static_cast<In>(static_cast<float>(small(rng)));
    auto run = [&](ts::Executor e) {
      std::vector<float> out(q.size(), std::numeric_limits<float>::quiet_NaN());
      auto dq = ts::Buffer<In>::from_host(q, e), dk = ts::Buffer<In>::from_host(k, e), dv = ts::Buffer<In>::from_host(v, e);
      auto dout = ts::Buffer<float>::from_host(out, e);
      kernel[{.grid = {(c.n + c.block_m - 1) / c.block_m},
              .meta = {{"BLOCK_M", c.block_m}, {"BLOCK_N", c.block_n}, {"HEAD_D", d}},
              .num_warps = c.warps,
              .num_stages = c.stages,
              .executor = e}](dq, dk, dv, dout, static_cast<std::int32_t>(c.n));
      ts::synchronize(e);
      return dout.to_host();
    };
    INFO("n " << c.n << " blocks " << c.block_m << "x" << c.block_n << " warps " << c.warps << " stages " << c.stages);
    const auto gpu = run(ts::Executor::Cuda);
    const auto want = run(ts::Executor::Interpreter);
    const auto reference = ex::chained_dots_reference<In>(q, k, v, c.n, d);
    std::int64_t bad = 0, bad_reference = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      bad += !(gpu[i] == want[i]);
      bad_reference += !(static_cast<double>(want[i]) == reference[i]);
    }
    CHECK(bad == 0);
    CHECK(bad_reference == 0);  // the interpreter against plain C++
  }
}

}  // namespace

TEST_CASE("GPU chained dots f16 (attention's loop without softmax) match the interpreter bit for bit", "[gpu][dot]") {
  check_gpu_chained_dots<ts::half>();
}
TEST_CASE("GPU chained dots bf16 (attention's loop without softmax) match the interpreter bit for bit", "[gpu][dot]") {
  check_gpu_chained_dots<ts::bfloat16>();
}

namespace {

// Attention forward (ex::make_attention) on the GPU against a double reference: causal and not, a
// sequence length no block divides, head_dim 64 and 128, wgmma (4 and 8 warps, 64 and 128 rows)
// or mma.sync (under TESSERA_CUDA_ARCH=sm_80), num_stages 1 and 2 (K and V prefetched in
// registers). The GPU's exp2 is ex2.approx and its sums run in the tensor cores' order, so O is
// held to a few units of the element type's rounding (|O| <= 1), as the example holds it.
template <class In>
void check_gpu_attention() {
  auto kernel = ex::make_attention<In>("attention_gpu_test");
  struct Case {
    std::int64_t heads, n, d, block_m, block_n;
    int warps, stages;
    bool causal;
  };
  const Case cases[] = {{3, 300, 64, 128, 64, 8, 1, false}, {3, 300, 64, 128, 64, 8, 2, true},
                        {2, 257, 128, 128, 32, 8, 1, true}, {2, 200, 64, 64, 32, 4, 2, false},
                        {2, 130, 128, 64, 64, 4, 1, true},
                        // P·V left in flight (wgmma_in_flight.hpp, form 2) over many key blocks: two
                        // warpgroups with V's spare stage, and one warpgroup at head_dim 128; every
                        // key block whole (EVEN: no key mask), and the last one partial.
                        {2, 1024, 128, 128, 32, 8, 2, false}, {1, 768, 128, 64, 64, 4, 2, true},
                        {1, 1000, 128, 128, 32, 8, 2, false}, {2, 1024, 64, 64, 64, 4, 2, false}};
  const double eps = std::is_same_v<In, ts::bfloat16> ? 0x1p-8 : 0x1p-11;
  for (const Case& c : cases) {
    INFO("heads " << c.heads << " n " << c.n << " head_dim " << c.d << " blocks " << c.block_m << "x" << c.block_n
                  << " warps " << c.warps << " stages " << c.stages << (c.causal ? " causal" : ""));
    std::mt19937 rng(static_cast<std::uint32_t>(c.n * c.d));
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    const auto count = static_cast<std::size_t>(c.heads * c.n * c.d);
    std::vector<In> q(count), k(count), v(count);
    for (auto* t : {&q, &k, &v})
      for (auto& x : *t) x = In(dist(rng));
    auto dq = ts::Buffer<In>::from_host(q, ts::Executor::Cuda), dk = ts::Buffer<In>::from_host(k, ts::Executor::Cuda),
         dv = ts::Buffer<In>::from_host(v, ts::Executor::Cuda);
    auto dout = ts::Buffer<In>::from_host(std::vector<In>(count, In(std::numeric_limits<float>::quiet_NaN())), ts::Executor::Cuda);
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.d));
    const ex::AttentionConfig cfg{.block_m = c.block_m, .block_n = c.block_n, .num_warps = c.warps, .num_stages = c.stages};
    kernel[ex::attention_options(c.heads, c.n, c.d, c.causal, scale, cfg, ts::Executor::Cuda)](dq, dk, dv, dout,
                                                                                        static_cast<std::int32_t>(c.n), scale);
    ts::synchronize(ts::Executor::Cuda);
    const auto got = dout.to_host();
    const auto want = ex::attention_reference<In>(q, k, v, c.heads, c.n, c.d, scale, c.causal);
    std::int64_t bad = 0;
    double worst = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const double err = std::abs(static_cast<double>(static_cast<float>(got[i])) - want[i]);
      worst = std::max(worst, err);
      bad += !(err <= 4 * eps);
    }
    INFO("worst abs error " << worst);
    CHECK(bad == 0);
  }
}

}  // namespace

TEST_CASE("GPU attention forward f16 matches a double reference", "[gpu][dot][attention]") { check_gpu_attention<ts::half>(); }
TEST_CASE("GPU attention forward bf16 matches a double reference", "[gpu][dot][attention]") {
  check_gpu_attention<ts::bfloat16>();
}

namespace {

// Attention backward (ex::attention_forward_backward: the forward with its lse, delta, dK/dV, dQ)
// on the GPU against a double reference: causal and not, a sequence length no block divides and
// one every block divides,
// head_dim 64 and 128 on attention_bwd_config (every dot on wgmma on sm_90a; mma.sync under
// TESSERA_CUDA_ARCH=sm_80), and smaller blocks on 4 warps. P and dS are rounded to the element
// type before the dots that take them: each gradient is held to a few units of its rounding of
// the largest gradient, as the example holds it.
template <class In>
void check_gpu_attention_backward() {
  struct Case {
    std::int64_t heads, n, d;
    bool causal, small_blocks;
  };
  const Case cases[] = {{2, 300, 64, false, false}, {2, 300, 64, true, false}, {2, 257, 128, true, false},
                        {2, 257, 128, false, false}, {2, 130, 64, true, true},
                        // every block whole (EVEN: no masks but the causal one)
                        {2, 512, 64, false, false}, {2, 512, 128, true, false}, {1, 512, 128, false, false}};
  const double eps = std::is_same_v<In, ts::bfloat16> ? 0x1p-8 : 0x1p-11;
  for (const Case& c : cases) {
    INFO("heads " << c.heads << " n " << c.n << " head_dim " << c.d << (c.causal ? " causal" : "")
                  << (c.small_blocks ? ", 64x32 blocks on 4 warps" : ""));
    std::mt19937 rng(static_cast<std::uint32_t>(c.n * c.d + 1));
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    const auto count = static_cast<std::size_t>(c.heads * c.n * c.d), rows = static_cast<std::size_t>(c.heads * c.n);
    std::vector<In> hq(count), hk(count), hv(count), hdo(count);
    for (auto* t : {&hq, &hk, &hv, &hdo})
      for (auto& x : *t) x = In(dist(rng));
    const auto on = ts::Executor::Cuda;
    auto buffer = [&](const std::vector<In>& h) { return ts::Buffer<In>::from_host(h, on); };
    auto poison = [&] { return buffer(std::vector<In>(count, In(std::numeric_limits<float>::quiet_NaN()))); };
    auto stats = [&] { return ts::Buffer<float>::from_host(std::vector<float>(rows, std::numeric_limits<float>::quiet_NaN()), on); };
    auto q = buffer(hq), k = buffer(hk), v = buffer(hv), d_o = buffer(hdo);
    auto o = poison(), dq = poison(), dk = poison(), dv = poison();
    auto lse = stats(), delta = stats();
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.d));
    const ex::AttentionConfig small{.block_m = 64, .block_n = 32, .num_warps = 4, .num_stages = 2};
    ex::attention_forward_backward<In>(ex::AttentionTensors<ts::Buffer<In>, ts::Buffer<float>>{q, k, v, o, d_o, dq, dk, dv,
                                                                                              lse, delta},
                                       c.heads, c.n, c.d, scale, c.causal,
                                       c.small_blocks ? small : ex::attention_config(c.d),
                                       c.small_blocks ? ex::AttentionBackwardConfig{small, small}
                                                      : ex::attention_bwd_config(c.d, c.causal, ts::target_name(on)),
                                       on);
    ts::synchronize(on);
    const auto want = ex::attention_backward_reference<In>(hq, hk, hv, hdo, c.heads, c.n, c.d, scale, c.causal);
    const std::pair<const char*, std::pair<std::vector<In>, const std::vector<double>*>> grads[] = {
        {"dQ", {dq.to_host(), &want.dq}}, {"dK", {dk.to_host(), &want.dk}}, {"dV", {dv.to_host(), &want.dv}}};
    for (const auto& [name, g] : grads) {
      double largest = 0, worst = 0;
      for (double x : *g.second) largest = std::max(largest, std::abs(x));
      std::int64_t bad = 0;  // a NaN (an element never written) counts as off
      for (std::size_t i = 0; i < count; ++i) {
        const double err = std::abs(static_cast<double>(static_cast<float>(g.first[i])) - (*g.second)[i]);
        worst = std::max(worst, err);
        bad += !(err <= 4 * eps * largest);
      }
      INFO(name << ": worst error " << worst << " against a largest gradient of " << largest);
      CHECK(bad == 0);
    }
  }
}

}  // namespace

TEST_CASE("GPU attention backward f16 matches a double reference", "[gpu][dot][attention]") {
  check_gpu_attention_backward<ts::half>();
}
TEST_CASE("GPU attention backward bf16 matches a double reference", "[gpu][dot][attention]") {
  check_gpu_attention_backward<ts::bfloat16>();
}

TEST_CASE("GPU split-K matmul (partial products, then their sum in slice order) matches the interpreter", "[gpu][dot]") {
  // ex::make_matmul_split_k then ex::make_split_k_sum, as tessera::matmul runs dB = Aᵀ·dC on the
  // GPU: wgmma tiles on sm_90a (mma.sync under TESSERA_CUDA_ARCH=sm_80), A row- and column-major
  // (wgmma's transposed A), a last slice shallower than the rest, masked edges. Poisoned partials
  // and outputs: a slice or element not written shows. The sum runs in slice order on both sides,
  // so the results differ only by the order within each slice's dot.
  auto partial_kernel = ex::make_matmul_split_k<ts::bfloat16>("split_k_gpu_test");
  auto sum_kernel = ex::make_split_k_sum<float, ts::bfloat16>("split_k_sum_gpu_test");
  const ex::MatmulConfig cfg{.block_m = 128, .block_n = 128, .block_k = 64, .group_m = 8, .num_warps = 8, .num_stages = 3};
  auto i32 = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  for (const bool a_transposed : {false, true}) {
    ex::MatmulShape s{200, 264, 1000, 1000, 1, 264, 1, 264, 1};
    if (a_transposed) s.stride_am = 1, s.stride_ak = s.m;
    const std::int64_t depth = ex::split_k_depth(s, cfg, 3), slices = (s.k + depth - 1) / depth;
    REQUIRE(slices == 3);
    std::mt19937 rng(static_cast<std::uint32_t>(a_transposed) + 11);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<ts::bfloat16> a(static_cast<std::size_t>(s.m * s.k)), b(static_cast<std::size_t>(s.k * s.n));
    for (auto& v : a) v = ts::bfloat16(dist(rng));
    for (auto& v : b) v = ts::bfloat16(dist(rng));
    auto run = [&](ts::Executor e) {
      auto da = ts::Buffer<ts::bfloat16>::from_host(a, e), db = ts::Buffer<ts::bfloat16>::from_host(b, e);
      auto partial = ts::Buffer<float>::from_host(
          std::vector<float>(static_cast<std::size_t>(slices * s.m * s.n), std::numeric_limits<float>::quiet_NaN()), e);
      auto dc = ts::Buffer<ts::bfloat16>::from_host(
          std::vector<ts::bfloat16>(static_cast<std::size_t>(s.m * s.n), ts::bfloat16(std::numeric_limits<float>::quiet_NaN())), e);
      partial_kernel[ex::split_k_options(s, cfg, slices, e)](da, db, partial, i32(s.m), i32(s.n), i32(s.k), i32(s.stride_am),
                                                              i32(s.stride_ak), i32(s.stride_bk), i32(s.stride_bn), i32(depth));
      sum_kernel[ex::split_k_sum_options(s.m, s.n, e)](partial, dc, i32(s.m), i32(s.n), i32(slices), i32(s.stride_cm),
                                                        i32(s.stride_cn));
      ts::synchronize(e);
      return std::pair{partial.to_host(), dc.to_host()};
    };
    const auto [gpu_partial, gpu] = run(ts::Executor::Cuda);
    const auto [want_partial, want] = run(ts::Executor::Interpreter);
    INFO((a_transposed ? "A column-major" : "A row-major"));
    std::int64_t bad_partial = 0, bad = 0;
    for (std::size_t i = 0; i < want_partial.size(); ++i)  // f32 sums of <= 448 products of size <= 1
      bad_partial += !(std::abs(gpu_partial[i] - want_partial[i]) <= 1e-6 * depth + 1e-6 * std::abs(want_partial[i]));
    for (std::size_t i = 0; i < want.size(); ++i) {  // sums a hair apart round one bf16 ulp (2^-7 relative) apart at most
      const float g = static_cast<float>(gpu[i]), w = static_cast<float>(want[i]);
      bad += !(std::abs(g - w) <= std::abs(w) * 0x1p-7f + 1e-5f);
    }
    CHECK(bad_partial == 0);
    CHECK(bad == 0);
  }
}

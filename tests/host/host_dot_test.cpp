// dot on the host target against the interpreter. With warps of 32, f16/bf16 dots run the
// tensor-core lowering: operands staged in shared memory, fragments fetched with ldmatrix and
// multiplied with mma.sync m16n8k16, both emulated lane by lane from the PTX ISA's definitions
// (jit/lower/mma_emulation.cpp): a wrong fragment, lane or warp map gives wrong elements here.
// f32 dots of input precision tf32 and tf32x3 (m16n8k8) and i8 dots (m16n8k32) run it too, their B
// fragments read word by word; f32 "ieee" dots, and every dot with warps of 64, run the fma
// lowering. Each emulated mma sums its products in k order, as the interpreter does, so results
// must match bit for bit (tf32x3 excepted, see check_dot). The host
// target also emulates sm_90a's wgmma (jit/lower/wgmma_emulation.cpp, decoding the matrix
// descriptors): dots of 4 and 8 warps whose M allows whole warpgroups run that lowering.
#include "examples/matmul_kernels.hpp"
#include "host_test_util.hpp"

using namespace host_test;
namespace ex = tessera_examples;

namespace {

struct Case {
  std::int64_t m, n, k;
  ex::MatmulConfig cfg;
  bool b_transposed;
  bool a_transposed = false;  // A column-major (M contiguous), as Aᵀ·dC in a matmul's backward pass
};

// Blocks from the smallest tensor-core tile to 128 x 128, odd problem sizes (masked edges,
// several programs, a partial last K step), B row- and column-major.
const Case kCases[] = {
    {16, 16, 16, {.block_m = 16, .block_n = 16, .block_k = 16, .group_m = 1}, false},
    {37, 45, 50, {.block_m = 32, .block_n = 16, .block_k = 16, .group_m = 2}, true},
    {100, 70, 40, {.block_m = 64, .block_n = 32, .block_k = 32, .group_m = 2}, false},
    {130, 129, 33, {.block_m = 128, .block_n = 128, .block_k = 32, .group_m = 8}, true},
    {64, 200, 64, {.block_m = 16, .block_n = 128, .block_k = 64, .group_m = 4}, false},
    // B column-major with K divisible by 16: its loads are vectors along K (dim 0 of B's tile),
    // which the pipelined copies must scatter into the ring's rows, not copy as one run.
    {96, 64, 64, {.block_m = 32, .block_n = 32, .block_k = 32, .group_m = 2}, true},
    // wgmma shapes (4 and 8 warps): 128-byte swizzles, operands staged from registers (1 stage),
    // an N of 256 (B in four 64-column blocks), and a K-major B with 64-element rows.
    {192, 96, 80, {.block_m = 64, .block_n = 64, .block_k = 64, .group_m = 2, .num_stages = 1}, false},
    {192, 256, 160, {.block_m = 64, .block_n = 256, .block_k = 64, .group_m = 1, .num_stages = 4}, false},
    {64, 128, 128, {.block_m = 64, .block_n = 64, .block_k = 64, .group_m = 1}, true},
    // A column-major: on wgmma an M-major A (transposed A, rows permuted within the M blocks),
    // staged from registers, copied whole 16 bytes at a time (M a multiple of 8) through a ring,
    // scattered (M odd), and with B column-major too.
    {192, 96, 80, {.block_m = 64, .block_n = 64, .block_k = 64, .group_m = 2, .num_stages = 1}, false, true},
    {192, 128, 96, {.block_m = 128, .block_n = 64, .block_k = 32, .group_m = 2, .num_stages = 3}, false, true},
    {130, 64, 64, {.block_m = 64, .block_n = 64, .block_k = 32, .group_m = 1}, false, true},
    {64, 128, 128, {.block_m = 64, .block_n = 64, .block_k = 64, .group_m = 1}, true, true},
};
// Under the sanitizers (tests/ci/sanitize.sh) the C++ around the generated code is what is checked:
// fewer warp counts there.
constexpr int kDotWarps32[] = {1, 2, 4, 8};
constexpr int kDotWarps64[] = {1, 4};
constexpr int kDotWarps32Sanitized[] = {1, 4};
constexpr int kDotWarps64Sanitized[] = {4};
constexpr std::span<const int> dot_warps32() { return kSanitized ? std::span<const int>(kDotWarps32Sanitized) : kDotWarps32; }
constexpr std::span<const int> dot_warps64() { return kSanitized ? std::span<const int>(kDotWarps64Sanitized) : kDotWarps64; }

// P: the input precision of float operands. tf32 and ieee match the interpreter bit for bit (tf32
// operands rounded alike on both); tf32x3's three products per step sum in another order than the
// interpreter's f32 products, so there the host result is held to a relative bound.
template <class In, class Out, ts::InputPrecision P = ts::InputPrecision::tf32>
void check_dot(double lo, double hi) {
  auto matmul = ex::make_matmul<In, Out, P>();
  constexpr bool tf32 = std::is_same_v<In, float> && P == ts::InputPrecision::tf32;
  constexpr bool tf32x3 = std::is_same_v<In, float> && P == ts::InputPrecision::tf32x3;
  for (const Case& c : kCases) {
    ex::MatmulShape s{c.m, c.n, c.k, c.k, 1, c.n, 1, c.n, 1};
    if (c.b_transposed) s.stride_bk = 1, s.stride_bn = c.k;
    if (c.a_transposed) s.stride_am = 1, s.stride_ak = c.m;
    std::mt19937 rng(kSeed + static_cast<std::uint32_t>(c.m * 7 + c.n));
    const auto a = random_values<In>(static_cast<std::size_t>(c.m * c.k), rng, lo, hi);
    const auto b = random_values<In>(static_cast<std::size_t>(c.k * c.n), rng, lo, hi);
    auto run = [&](ts::Executor e, int warps) {
      auto out = poisoned<Out>(static_cast<std::size_t>(c.m * c.n));
      ex::MatmulConfig cfg = c.cfg;
      cfg.num_warps = warps;
      std::apply([&](auto... sc) { matmul[ex::matmul_options(s, cfg, e)](a, b, out, sc...); }, ex::matmul_scalars(s));
      return out;
    };
    const std::string precision = !std::is_same_v<In, float> ? "" : tf32 ? " (tf32)" : tf32x3 ? " (tf32x3)" : " (ieee)";
    const std::string label = std::string(type_name<In>()) + precision + " dot " + std::to_string(c.m) + "x" + std::to_string(c.n) +
                              "x" + std::to_string(c.k) + " blocks " + std::to_string(c.cfg.block_m) + "x" +
                              std::to_string(c.cfg.block_n) + "x" + std::to_string(c.cfg.block_k) +
                              (c.a_transposed ? ", A column-major" : "") + (c.b_transposed ? ", B column-major" : "");
    const auto reference = ex::matmul_reference<In>(a, b, s, tf32);
    against_interpreter(label, run,
                        [&](const std::string& what, const std::vector<Out>& got, const std::vector<Out>& interp) {
                          if (tf32x3) expect_match(what, got, interp, relative(1e-5, static_cast<double>(c.k)));
                          else expect_match(what, got, interp);
                          // The interpreter itself against a double-precision reference.
                          std::vector<Out> want(reference.size());
                          for (std::size_t i = 0; i < want.size(); ++i) want[i] = static_cast<Out>(reference[i]);
                          // A 16-bit C is the f32 sum rounded once more: within one of its ulps.
                          expect_match(what + " (interpreter vs C++ reference)", interp, want,
                                       sizeof(Out) == 2 ? relative(1.0 / 128, 1.0) : relative(1e-5, static_cast<double>(c.k)));
                        },
                        dot_warps32(), dot_warps64());
  }
}

}  // namespace

TEST_CASE("dot f16 on the host targets (tensor-core lowering, emulated) matches the interpreter", "[host][dot]") {
  check_dot<ts::half, float>(-1, 1);
}
TEST_CASE("dot bf16 on the host targets (tensor-core lowering, emulated) matches the interpreter", "[host][dot]") {
  check_dot<ts::bfloat16, float>(-1, 1);
}
TEST_CASE("dot bf16 with a bf16 C on the host targets (the cast accumulator converted through shared memory) matches",
          "[host][dot]") {
  // A 16-bit C converts the accumulator (wgmma's on 4 and 8 warps, mma.sync's otherwise), cast to
  // bf16, to the store's coalesced layout through shared memory with 16-byte row padding and
  // vector loads: a wrong element offset or run length changes elements of C.
  check_dot<ts::bfloat16, ts::bfloat16>(-1, 1);
}
TEST_CASE("dot f32, input precision tf32, on the host targets (mma.sync m16n8k8, emulated) matches the interpreter",
          "[host][dot]") {
  check_dot<float, float, ts::InputPrecision::tf32>(-1, 1);
}
TEST_CASE("dot f32, input precision tf32x3, on the host targets (three mma.sync per step) is near the interpreter",
          "[host][dot]") {
  check_dot<float, float, ts::InputPrecision::tf32x3>(-1, 1);
}
TEST_CASE("dot f32, input precision ieee, on the host targets (fma lowering) matches the interpreter", "[host][dot]") {
  check_dot<float, float, ts::InputPrecision::ieee>(-1, 1);
}
TEST_CASE("dot i8 on the host targets (mma.sync m16n8k32 where K allows, emulated) matches the interpreter",
          "[host][dot]") {
  check_dot<std::int8_t, std::int32_t>(-128, 127);
}

TEST_CASE("chained dots (an accumulator cast to f16 as the next dot's A) on the host targets", "[host][dot]") {
  // (A·B).to<half>() · C, as attention's P·V: the first accumulator feeds the second dot as its
  // left operand.
  auto k = ts::kernel("chained_dot", [](ts::Ptr<ts::half> a, ts::Ptr<ts::half> b, ts::Ptr<ts::half> c, ts::Ptr<float> out) {
    auto r = ts::arange(0, 32), q = ts::arange(0, 16);
    auto x = ts::load(a + r.col() * 16 + q.row());  // 32 x 16
    auto y = ts::load(b + q.col() * 16 + q.row());  // 16 x 16
    auto z = ts::load(c + q.col() * 32 + r.row());  // 16 x 32
    auto p = ts::dot(x, y).to<ts::half>();          // 32 x 16
    ts::store(out + r.col() * 32 + r.row(), ts::dot(p, z));
  });
  std::mt19937 rng(kSeed);
  const auto a = random_values<ts::half>(32 * 16, rng, -1, 1), b = random_values<ts::half>(16 * 16, rng, -1, 1),
             c = random_values<ts::half>(16 * 32, rng, -1, 1);
  auto run = [&](ts::Executor e, int warps) {
    auto out = poisoned<float>(32 * 32);
    k[{.grid = {1}, .num_warps = warps, .executor = e}](a, b, c, out);
    return out;
  };
  // The reference: the first product rounded to f16 as the kernel does, then the second in double.
  std::vector<float> want(32 * 32);
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) {
      double s = 0;
      for (int t = 0; t < 16; ++t) {
        float p = 0;
        for (int u = 0; u < 16; ++u) p = std::fma(static_cast<float>(a[i * 16 + u]), static_cast<float>(b[u * 16 + t]), p);
        s += static_cast<double>(static_cast<float>(ts::half(p))) * static_cast<float>(c[t * 32 + j]);
      }
      want[i * 32 + j] = static_cast<float>(s);
    }
  against_interpreter("chained dots", run,
                      [&](const std::string& what, const std::vector<float>& got, const std::vector<float>& interp) {
                        expect_match(what, got, interp);
                        expect_match(what + " (interpreter vs C++ reference)", interp, want, relative(1e-5, 16));
                      },
                      dot_warps32(), dot_warps64());
}

TEST_CASE("chained dots in a loop (attention without softmax) on the host targets match the interpreter", "[host][dot]") {
  // ex::make_chained_dots: per K/V block, (Q·Kᵀ).to<bf16>() is the next dot's A, accumulated over
  // the loop; 4 warps take wgmma (64-row tiles), the other warp counts mma.sync or (warps of 64)
  // the fma loops. Small integers keep every sum exact, so the C++ reference must match too.
  auto kernel = ex::make_chained_dots<ts::bfloat16>();
  constexpr std::int64_t n = 100, d = 32, block_m = 64, block_n = 32;
  std::mt19937 rng(kSeed);
  std::uniform_int_distribution<int> small(-2, 2);
  std::vector<ts::bfloat16> q(static_cast<std::size_t>(n * d)), k(q.size()), v(q.size());
  for (auto* t : {&q, &k, &v})
    for (auto& x : *t) x = ts::bfloat16(static_cast<float>(small(rng)));
  auto run = [&](ts::Executor e, int warps) {
    auto out = poisoned<float>(q.size());
    kernel[{.grid = {(n + block_m - 1) / block_m},
            .meta = {{"BLOCK_M", block_m}, {"BLOCK_N", block_n}, {"HEAD_D", d}},
            .num_warps = warps,
            .num_stages = 2,
            .executor = e}](q, k, v, out, static_cast<std::int32_t>(n));
    return out;
  };
  const auto reference = ex::chained_dots_reference<ts::bfloat16>(q, k, v, n, d);
  std::vector<float> want(reference.begin(), reference.end());
  against_interpreter("chained dots in a loop", run,
                      [&](const std::string& what, const std::vector<float>& got, const std::vector<float>& interp) {
                        expect_match(what, got, interp);
                        expect_match(what + " (interpreter vs C++ reference)", interp, want);
                      },
                      dot_warps32(), dot_warps64());
}

TEST_CASE("split-K matmul (K in slices, partial products summed in order) on the host targets", "[host][dot]") {
  // ex::make_matmul_split_k then ex::make_split_k_sum, as tessera::matmul runs a product of few
  // tiles over a long K: three slices of 128 (the last 44 deep, a partial BLOCK_K step), masked
  // edges, an A column-major (M-major on wgmma) and a C written through transposed strides.
  auto partial_kernel = ex::make_matmul_split_k<ts::half>();
  auto sum_kernel = ex::make_split_k_sum<float, float>();
  const ex::MatmulConfig cfg{.block_m = 64, .block_n = 64, .block_k = 32, .group_m = 2, .num_stages = 2};
  ex::MatmulShape s{96, 70, 300, 1, 96, 70, 1, 1, 96};  // A column-major, C column-major
  const std::int64_t depth = ex::split_k_depth(s, cfg, 3), slices = (s.k + depth - 1) / depth;
  REQUIRE(depth == 128);
  REQUIRE(slices == 3);
  std::mt19937 rng(kSeed);
  const auto a = random_values<ts::half>(static_cast<std::size_t>(s.m * s.k), rng, -1, 1);
  const auto b = random_values<ts::half>(static_cast<std::size_t>(s.k * s.n), rng, -1, 1);
  auto i32 = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  auto run = [&](ts::Executor e, int warps) {
    auto partial = poisoned<float>(static_cast<std::size_t>(slices * s.m * s.n));
    auto out = poisoned<float>(static_cast<std::size_t>(s.m * s.n));
    ts::LaunchOptions opts = ex::split_k_options(s, cfg, slices, e);
    opts.num_warps = warps;
    partial_kernel[opts](a, b, partial, i32(s.m), i32(s.n), i32(s.k), i32(s.stride_am), i32(s.stride_ak), i32(s.stride_bk),
                         i32(s.stride_bn), i32(depth));
    sum_kernel[ex::split_k_sum_options(s.m, s.n, e)](partial, out, i32(s.m), i32(s.n), i32(slices), i32(s.stride_cm),
                                                       i32(s.stride_cn));
    return out;
  };
  // The reference is row-major: C's element (i, j) is out[i + j * m].
  const auto reference = ex::matmul_reference<ts::half>(a, b, s);
  std::vector<float> want(reference.size());
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t j = 0; j < s.n; ++j)
      want[static_cast<std::size_t>(i + j * s.m)] = static_cast<float>(reference[static_cast<std::size_t>(i * s.n + j)]);
  against_interpreter("split-K matmul 96x70x300 in 3 slices", run,
                      [&](const std::string& what, const std::vector<float>& got, const std::vector<float>& interp) {
                        expect_match(what, got, interp);
                        expect_match(what + " (interpreter vs C++ reference)", interp, want, relative(1e-5, static_cast<double>(s.k)));
                      },
                      dot_warps32(), dot_warps64());
}

TEST_CASE("split_k_slices splits only products that leave most multiprocessors idle", "[host][dot]") {
  const ex::MatmulConfig cfg{};  // 128 x 128 tiles
  // dB of a 1024 x 1024 weight over 16384 tokens: 64 tiles on 132 SMs, two slices of 8192.
  CHECK(ex::split_k_slices({1024, 1024, 16384, 1, 1024, 1024, 1, 1024, 1}, cfg, 132) == 2);
  // 16 tiles: 8 slices, each at least 1024 deep (16384 / 8 = 2048).
  CHECK(ex::split_k_slices({512, 512, 16384, 512, 1, 512, 1, 512, 1}, cfg, 132) == 8);
  // A short K is not split: slices of at least 1024.
  CHECK(ex::split_k_slices({512, 512, 1500, 512, 1, 512, 1, 512, 1}, cfg, 132) == 1);
  // Enough tiles to fill half the machine: not split.
  CHECK(ex::split_k_slices({4096, 4096, 16384, 1, 4096, 4096, 1, 4096, 1}, cfg, 132) == 1);
  CHECK(ex::split_k_depth({512, 512, 1000, 512, 1, 512, 1, 512, 1}, {.block_k = 64}, 3) == 384);
}

// Matrix multiplication C = A·B as Triton's tutorial 03: one program per BLOCK_M x BLOCK_N tile of
// C, programs ordered in groups of GROUP_M rows of tiles so that programs running together share
// A's rows and B's columns in L2, a loop over K in BLOCK_K steps with masked edges (any M, N, K
// and any strides), the accumulator in f32 (i32 for int8), cast to C's type at the end. Shared by
// the example, the tests and the benchmarks, with a plain C++ reference.
#pragma once
#include <tessera/tessera.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace tessera_examples {
namespace ts = tessera;

struct MatmulShape {
  std::int64_t m, n, k;
  std::int64_t stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn;
};

// The (row, column) tile of C this program computes, in Triton's grouped order: programs run
// GROUP_M rows of tiles at a time, column by column, so that those running together share rows of
// A and columns of B in L2.
inline std::pair<ts::Int, ts::Int> grouped_tile(const ts::Int& m, const ts::Int& n, int BM, int BN, int GROUP_M) {
  auto pid = ts::program_id(0);
  auto num_pid_m = (m + (BM - 1)) / BM;
  auto num_pid_n = (n + (BN - 1)) / BN;
  auto num_pid_in_group = num_pid_n * GROUP_M;
  auto first_pid_m = (pid / num_pid_in_group) * GROUP_M;
  auto group_size_m = ts::minimum(num_pid_m - first_pid_m, GROUP_M);
  return {first_pid_m + (pid % num_pid_in_group) % group_size_m, (pid % num_pid_in_group) / group_size_m};
}

// acc + a·b, float operands multiplied with input precision P (the other types have no choice).
template <ts::InputPrecision P, class In>
auto dot_with(const ts::Tile<In>& a, const ts::Tile<In>& b, const ts::Tile<ts::dot_accumulator_t<In>>& acc,
              const ts::Loc& loc = ts::Loc::current()) {
  if constexpr (std::is_same_v<In, float>) return ts::dot(a, b, acc, P, loc);
  else return ts::dot(a, b, acc, loc);
}

// acc = A[rows, k_begin:k]·B[k_begin:k, cols] in BLOCK_K steps, rows and columns past the edges
// and K past its end masked to 0: the main loop of every matmul below (k_begin: 0, or a split-K
// slice's first k, a multiple of BLOCK_K).
template <class In, ts::InputPrecision P = ts::InputPrecision::tf32, class KBegin = int>
auto accumulate_product(const ts::Ptr<In>& a, const ts::Ptr<In>& b, const ts::Int& m, const ts::Int& n, const ts::Int& k,
                        const ts::Int& stride_am, const ts::Int& stride_ak, const ts::Int& stride_bk,
                        const ts::Int& stride_bn, const ts::Int& rows, const ts::Int& cols, int BK,
                        const KBegin& k_begin = 0) {
  auto offs_k = ts::arange(0, BK);
  auto acc = ts::zeros<ts::dot_accumulator_t<In>>({rows.shape()[0], cols.shape()[0]});
  ts::for_range(k_begin, k, BK, [&](ts::Int k0) {
    auto ks = k0 + offs_k;
    auto a_tile = ts::load(a + rows.col() * stride_am + ks.row() * stride_ak, (rows.col() < m) & (ks.row() < k), 0);
    auto b_tile = ts::load(b + ks.col() * stride_bk + cols.row() * stride_bn, (ks.col() < k) & (cols.row() < n), 0);
    acc = dot_with<P>(a_tile, b_tile, acc);
  });
  return acc;
}

// In: the operands' element type (half, bfloat16, float, int8_t); Out: C's; P: how float operands
// are multiplied (Triton's input_precision; tf32 by default, as Triton's).
template <class In, class Out, ts::InputPrecision P = ts::InputPrecision::tf32>
auto make_matmul(const char* name = "matmul") {
  return ts::kernel(name, [](ts::Ptr<In> a, ts::Ptr<In> b, ts::Ptr<Out> c, ts::Int m, ts::Int n, ts::Int k,
                             ts::Int stride_am, ts::Int stride_ak, ts::Int stride_bk, ts::Int stride_bn,
                             ts::Int stride_cm, ts::Int stride_cn) {
    const int BM = static_cast<int>(ts::meta("BLOCK_M")), BN = static_cast<int>(ts::meta("BLOCK_N"));
    const int BK = static_cast<int>(ts::meta("BLOCK_K")), GROUP_M = static_cast<int>(ts::meta("GROUP_M"));
    auto [pid_m, pid_n] = grouped_tile(m, n, BM, BN, GROUP_M);
    // Rows and columns past the edges are masked (other = 0), not wrapped with % m as Triton's
    // tutorial does: a remainder hides from axis info that the columns are contiguous, and the
    // loads would not be vectorized.
    auto rows = pid_m * BM + ts::arange(0, BM);
    auto cols = pid_n * BN + ts::arange(0, BN);
    auto acc = accumulate_product<In, P>(a, b, m, n, k, stride_am, stride_ak, stride_bk, stride_bn, rows, cols, BK);
    auto mask = (rows.col() < m) & (cols.row() < n);
    ts::store(c + rows.col() * stride_cm + cols.row() * stride_cn, acc.template to<Out>(), mask);
  });
}

// Split-K, for few output tiles over a long K (a backward pass's dB = Aᵀ·dC of a 1024 x 1024
// weight over 16384 tokens is 64 tiles of 128 x 128 for 132 SMs): K is cut into slices of
// k_per_split (a multiple of BLOCK_K), one program per (tile, slice), grid {tiles, slices}. Each
// program writes its accumulator to `partial`, [slices, M, N] row-major in the accumulator's type;
// make_split_k_sum then adds the slices in slice order and casts to C. Deterministic (no atomics),
// one extra pass over M x N x slices accumulators, as cuBLAS's split-K does.
template <class In, ts::InputPrecision P = ts::InputPrecision::tf32>
auto make_matmul_split_k(const char* name = "matmul_split_k") {
  using Acc = ts::dot_accumulator_t<In>;
  return ts::kernel(name, [](ts::Ptr<In> a, ts::Ptr<In> b, ts::Ptr<Acc> partial, ts::Int m, ts::Int n, ts::Int k,
                             ts::Int stride_am, ts::Int stride_ak, ts::Int stride_bk, ts::Int stride_bn,
                             ts::Int k_per_split) {
    const int BM = static_cast<int>(ts::meta("BLOCK_M")), BN = static_cast<int>(ts::meta("BLOCK_N"));
    const int BK = static_cast<int>(ts::meta("BLOCK_K")), GROUP_M = static_cast<int>(ts::meta("GROUP_M"));
    auto [pid_m, pid_n] = grouped_tile(m, n, BM, BN, GROUP_M);
    auto slice = ts::program_id(1);
    auto k_begin = slice * k_per_split;
    auto k_end = ts::minimum(k, k_begin + k_per_split);
    auto rows = pid_m * BM + ts::arange(0, BM);
    auto cols = pid_n * BN + ts::arange(0, BN);
    auto acc = accumulate_product<In, P>(a, b, m, n, k_end, stride_am, stride_ak, stride_bk, stride_bn, rows, cols, BK, k_begin);
    ts::store(partial + slice * m * n + rows.col() * n + cols.row(), acc, (rows.col() < m) & (cols.row() < n));
  });
}

// C = the sum of make_matmul_split_k's `slices` partial products, in slice order, cast to Out,
// stored through C's strides: one program per BLOCK_M x BLOCK_N tile of C.
template <class Acc, class Out>
auto make_split_k_sum(const char* name = "split_k_sum") {
  return ts::kernel(name, [](ts::Ptr<Acc> partial, ts::Ptr<Out> c, ts::Int m, ts::Int n, ts::Int slices, ts::Int stride_cm,
                             ts::Int stride_cn) {
    const int BM = static_cast<int>(ts::meta("BLOCK_M")), BN = static_cast<int>(ts::meta("BLOCK_N"));
    auto num_pid_n = (n + (BN - 1)) / BN;
    auto rows = (ts::program_id(0) / num_pid_n) * BM + ts::arange(0, BM);
    auto cols = (ts::program_id(0) % num_pid_n) * BN + ts::arange(0, BN);
    auto mask = (rows.col() < m) & (cols.row() < n);
    auto sum = ts::zeros<Acc>({BM, BN});
    ts::for_range(0, slices, 1, [&](ts::Int s) { sum = sum + ts::load(partial + s * m * n + rows.col() * n + cols.row(), mask, 0); });
    ts::store(c + rows.col() * stride_cm + cols.row() * stride_cn, sum.template to<Out>(), mask);
  });
}

// How many BLOCK_M x BLOCK_N tiles cover an M x N output: the programs of a matmul's grid.
inline std::int64_t output_tiles(std::int64_t m, std::int64_t n, std::int64_t block_m, std::int64_t block_n) {
  return ((m + block_m - 1) / block_m) * ((n + block_n - 1) / block_n);
}

// The tiles of make_split_k_sum, and its launch options for an M x N product.
inline constexpr std::int64_t kSplitKSumBlockM = 16, kSplitKSumBlockN = 256;
inline ts::LaunchOptions split_k_sum_options(std::int64_t m, std::int64_t n, ts::Executor ex = ts::Executor::Auto) {
  const std::int64_t tiles = output_tiles(m, n, kSplitKSumBlockM, kSplitKSumBlockN);
  return {.grid = {tiles}, .meta = {{"BLOCK_M", kSplitKSumBlockM}, {"BLOCK_N", kSplitKSumBlockN}}, .num_warps = 4, .executor = ex};
}

// The default is the fastest configuration measured on the H200 (notes/tensor-cores.md).
// C = gelu(A·B + bias) cast to bfloat16 (bias: one f32 per column; GELU exact, with erf), the
// epilogue fused into the matmul: it runs on the accumulator in registers before the one store.
// The same tiling as make_matmul.
template <class In>
auto make_matmul_bias_gelu(const char* name = "matmul_bias_gelu") {
  return ts::kernel(name, [](ts::Ptr<In> a, ts::Ptr<In> b, ts::Ptr<float> bias, ts::Ptr<ts::bfloat16> c, ts::Int m,
                             ts::Int n, ts::Int k, ts::Int stride_am, ts::Int stride_ak, ts::Int stride_bk,
                             ts::Int stride_bn, ts::Int stride_cm, ts::Int stride_cn) {
    const int BM = static_cast<int>(ts::meta("BLOCK_M")), BN = static_cast<int>(ts::meta("BLOCK_N"));
    const int BK = static_cast<int>(ts::meta("BLOCK_K")), GROUP_M = static_cast<int>(ts::meta("GROUP_M"));
    auto [pid_m, pid_n] = grouped_tile(m, n, BM, BN, GROUP_M);
    auto rows = pid_m * BM + ts::arange(0, BM);
    auto cols = pid_n * BN + ts::arange(0, BN);
    auto acc = accumulate_product<In>(a, b, m, n, k, stride_am, stride_ak, stride_bk, stride_bn, rows, cols, BK);
    auto x = acc + ts::load(bias + cols, cols < n, 0.0f).row();
    auto gelu = 0.5f * x * (1.0f + ts::erf(x * 0.70710678118654752f));
    ts::store(c + rows.col() * stride_cm + cols.row() * stride_cn, gelu.template to<ts::bfloat16>(),
              (rows.col() < m) & (cols.row() < n));
  });
}

// Batched C[z] = A[z]·B[z]: program_id(1) picks the batch, whose matrices start batch_stride_*
// elements apart; otherwise make_matmul (grid {tiles, batches}).
template <class In, class Out>
auto make_batched_matmul(const char* name = "batched_matmul") {
  return ts::kernel(name, [](ts::Ptr<In> a, ts::Ptr<In> b, ts::Ptr<Out> c, ts::Int m, ts::Int n, ts::Int k,
                             ts::Int batch_stride_a, ts::Int batch_stride_b, ts::Int batch_stride_c) {
    const int BM = static_cast<int>(ts::meta("BLOCK_M")), BN = static_cast<int>(ts::meta("BLOCK_N"));
    const int BK = static_cast<int>(ts::meta("BLOCK_K"));
    auto z = ts::program_id(1);
    auto num_pid_n = (n + (BN - 1)) / BN;
    auto pid = ts::program_id(0);
    auto rows = (pid / num_pid_n) * BM + ts::arange(0, BM);
    auto cols = (pid % num_pid_n) * BN + ts::arange(0, BN);
    auto a_z = a + z * batch_stride_a;
    auto b_z = b + z * batch_stride_b;
    auto offs_k = ts::arange(0, BK);
    auto acc = ts::zeros<ts::dot_accumulator_t<In>>({BM, BN});
    ts::for_range(0, k, BK, [&](ts::Int k0) {
      auto ks = k0 + offs_k;
      auto a_tile = ts::load(a_z + rows.col() * k + ks.row(), (rows.col() < m) & (ks.row() < k), 0);
      auto b_tile = ts::load(b_z + ks.col() * n + cols.row(), (ks.col() < k) & (cols.row() < n), 0);
      acc = ts::dot(a_tile, b_tile, acc);
    });
    ts::store(c + z * batch_stride_c + rows.col() * n + cols.row(), acc.template to<Out>(), (rows.col() < m) & (cols.row() < n));
  });
}

// O = sum over key blocks j of (Q·K_jᵀ).to<In>()·V_j, for Q, K, V of n x HEAD_D (row-major, any
// n): attention's loop without its softmax. Each program takes BLOCK_M rows of Q and walks K and V
// in blocks of BLOCK_N rows; the first dot's f32 accumulator, cast to In, is the second dot's left
// operand (chained dots), K is read transposed through its strides. O in f32.
template <class In>
auto make_chained_dots(const char* name = "chained_dots") {
  return ts::kernel(name, [](ts::Ptr<In> q, ts::Ptr<In> k, ts::Ptr<In> v, ts::Ptr<float> o, ts::Int n) {
    const int BM = static_cast<int>(ts::meta("BLOCK_M")), BN = static_cast<int>(ts::meta("BLOCK_N"));
    const int D = static_cast<int>(ts::meta("HEAD_D"));
    auto rows = ts::program_id(0) * BM + ts::arange(0, BM);
    auto dims = ts::arange(0, D);
    auto row_mask = (rows.col() < n) & (dims.row() < D);
    auto q_tile = ts::load(q + rows.col() * D + dims.row(), row_mask, 0);
    auto acc = ts::zeros<float>({BM, D});
    ts::for_range(0, n, BN, [&](ts::Int j0) {
      auto keys = j0 + ts::arange(0, BN);
      auto k_t = ts::load(k + keys.row() * D + dims.col(), (keys.row() < n) & (dims.col() < D), 0);  // D x BN
      auto p = ts::dot(q_tile, k_t).template to<In>();
      auto v_tile = ts::load(v + keys.col() * D + dims.row(), (keys.col() < n) & (dims.row() < D), 0);
      acc = ts::dot(p, v_tile, acc);
    });
    ts::store(o + rows.col() * D + dims.row(), acc, row_mask);
  });
}

// make_chained_dots in plain C++, each product rounded to In as the kernel rounds it.
template <class In>
std::vector<double> chained_dots_reference(std::span<const In> q, std::span<const In> k, std::span<const In> v,
                                           std::int64_t n, std::int64_t d) {
  auto f = [](In x) { return static_cast<double>(static_cast<float>(x)); };
  std::vector<double> o(static_cast<std::size_t>(n * d));
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t t = 0; t < d; ++t) s += f(q[i * d + t]) * f(k[j * d + t]);
      const double p = f(static_cast<In>(static_cast<float>(s)));
      for (std::int64_t t = 0; t < d; ++t) o[i * d + t] += p * f(v[j * d + t]);
    }
  return o;
}

struct MatmulConfig {
  std::int64_t block_m = 128, block_n = 128, block_k = 32, group_m = 8;
  int num_warps = 4, num_stages = 3;
};

inline ts::LaunchOptions matmul_options(const MatmulShape& s, const MatmulConfig& cfg = {},
                                        ts::Executor ex = ts::Executor::Auto) {
  const std::int64_t tiles = output_tiles(s.m, s.n, cfg.block_m, cfg.block_n);
  return {.grid = {tiles},
          .meta = {{"BLOCK_M", cfg.block_m}, {"BLOCK_N", cfg.block_n}, {"BLOCK_K", cfg.block_k}, {"GROUP_M", cfg.group_m}},
          .num_warps = cfg.num_warps,
          .num_stages = cfg.num_stages,
          .executor = ex};
}

// How many K slices a split-K product of this shape and config should take on `sms`
// multiprocessors: 1 (no split) unless the output's tiles leave more than half the
// multiprocessors idle; then as many slices as keep the programs within one wave, each at least
// 1024 deep (shallower slices would spend more on the partial sums than they gain).
inline std::int64_t split_k_slices(const MatmulShape& s, const MatmulConfig& cfg, int sms) {
  const std::int64_t tiles = output_tiles(s.m, s.n, cfg.block_m, cfg.block_n);
  if (2 * tiles > sms) return 1;
  return std::max<std::int64_t>(1, std::min<std::int64_t>(sms / tiles, s.k / 1024));
}

// make_matmul_split_k's launch: one program per (output tile, K slice).
inline ts::LaunchOptions split_k_options(const MatmulShape& s, const MatmulConfig& cfg, std::int64_t slices,
                                         ts::Executor ex = ts::Executor::Auto) {
  ts::LaunchOptions o = matmul_options(s, cfg, ex);
  o.grid = {output_tiles(s.m, s.n, cfg.block_m, cfg.block_n), slices};
  return o;
}

// The depth of each of `slices` K slices: K split evenly, rounded up to whole BLOCK_K steps.
inline std::int64_t split_k_depth(const MatmulShape& s, const MatmulConfig& cfg, std::int64_t slices) {
  const std::int64_t steps = (s.k + cfg.block_k - 1) / cfg.block_k;
  return ((steps + slices - 1) / slices) * cfg.block_k;
}

// The grid as a function of the meta-parameters, for autotuning over block sizes.
inline ts::Grid matmul_grid(const MatmulShape& s) {
  return ts::Grid([m = s.m, n = s.n](const ts::MetaValues& meta) {
    std::int64_t bm = 0, bn = 0;
    for (const auto& [key, value] : meta) {
      if (key == "BLOCK_M") bm = value;
      if (key == "BLOCK_N") bn = value;
    }
    return ts::Dim3{static_cast<std::uint32_t>(output_tiles(m, n, bm, bn)), 1, 1};
  });
}

// Eight configurations for ts::autotune: block sizes, num_warps, num_stages and GROUP_M. On Hopper
// 128x256x64 with 4 stages (a ring of four, 192 KB) beat 3 stages by 1-2% (H100, session 29); it
// took the place of 128x256x32/w8/s3 (eight configs: the autotuning time the issue sets). Configs
// a device cannot hold are skipped by the autotuner.
inline std::vector<ts::Config> matmul_autotune_configs() {
  auto c = [](std::int64_t bm, std::int64_t bn, std::int64_t bk, std::int64_t g, int warps, int stages) {
    return ts::Config{.meta = {{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}, {"GROUP_M", g}},
                      .num_warps = warps, .num_stages = stages};
  };
  return {c(128, 256, 64, 8, 8, 3), c(128, 128, 64, 8, 4, 3), c(128, 128, 32, 8, 4, 4), c(64, 256, 32, 8, 4, 4),
          c(128, 64, 32, 8, 4, 4),  c(64, 128, 32, 8, 4, 4),  c(128, 128, 64, 8, 8, 3), c(128, 256, 64, 8, 8, 4)};
}

// The launch arguments after the three pointers.
inline auto matmul_scalars(const MatmulShape& s) {
  auto i = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  return std::make_tuple(i(s.m), i(s.n), i(s.k), i(s.stride_am), i(s.stride_ak), i(s.stride_bk), i(s.stride_bn),
                         i(s.stride_cm), i(s.stride_cn));
}

// f as the tensor cores read a tf32 operand: the 13 low mantissa bits dropped (10 kept);
// infinities and NaNs unchanged.
inline float truncate_to_tf32(float f) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits &= 0xffffe000u;
  return std::bit_cast<float>(bits);
}

// C = A·B in double (floats) or int64 (ints), elements read through the strides; with `tf32`, the
// float operands truncated to tf32 first, as input precision tf32 multiplies them.
template <class In>
std::vector<double> matmul_reference(std::span<const In> a, std::span<const In> b, const MatmulShape& s,
                                     bool tf32 = false) {
  auto value = [tf32](In x) {
    const float f = static_cast<float>(x);
    return static_cast<double>(tf32 ? truncate_to_tf32(f) : f);
  };
  std::vector<double> c(static_cast<std::size_t>(s.m * s.n));
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t p = 0; p < s.k; ++p) {
      const double x = value(a[i * s.stride_am + p * s.stride_ak]);
      for (std::int64_t j = 0; j < s.n; ++j) c[i * s.n + j] += x * value(b[p * s.stride_bk + j * s.stride_bn]);
    }
  return c;
}

}  // namespace tessera_examples

// Every example kernel (examples/kernels.hpp, examples/norm_kernels.hpp) on the host targets against
// the interpreter, for every num_warps (warps of 32) and a subset with warps of 64, on one
// element, a tail and a million elements (or rows x columns of about as many). Elementwise
// examples must match bit for bit; those that reduce sum in another order than the interpreter
// (a tree over threads, lanes and warps instead of left to right) and match within a few ulps.
#include "examples/kernels.hpp"
#include "examples/norm_kernels.hpp"
#include "host_test_util.hpp"

using namespace host_test;
namespace ex = tessera_examples;

namespace {

constexpr int kWarps64[] = {1, 4, 16};

// f16 results of f32 arithmetic whose order differs: a couple of f16 roundings, plus what the
// f32 sums lose relative to the row's scale (`floor`).
std::function<double(std::size_t, double)> f16_bound(double floor) {
  return [=](std::size_t, double w) { return 2 * ulp_of<ts::half>(w) + 1e-4 * floor; };
}

template <class T>
double rms(const std::vector<T>& v) {
  double s = 0;
  for (const T& x : v) s += as_double(x) * as_double(x);
  return std::sqrt(s / static_cast<double>(std::max<std::size_t>(v.size(), 1)));
}

// (rows, cols) near the sizes of the issue: one element, a 1000-column tail, about 2^20 elements.
const std::pair<std::int64_t, std::int64_t> kRowShapes[] = {{1, 1}, {3, 1000}, {257, 4099}};

}  // namespace

TEST_CASE("example vector_add on the host targets matches the interpreter bit for bit", "[host][examples]") {
  auto k = ex::make_vector_add();
  for (std::int64_t n : kSizes) {
    std::mt19937 rng(kSeed + static_cast<std::uint32_t>(n));
    const auto x = random_values<float>(n, rng, -100, 100), y = random_values<float>(n, rng, -100, 100);
    auto run = [&](ts::Executor e, int warps) {
      auto out = poisoned<float>(n);
      auto opts = ex::vector_add_options(n, e);
      opts.num_warps = warps;
      k[opts](x, y, out, static_cast<std::int32_t>(n));
      return out;
    };
    std::vector<float> want(n);
    ex::vector_add_reference(x, y, want);
    against_interpreter("vector_add, n = " + std::to_string(n), run,
                        [&](const std::string& what, const std::vector<float>& got, const std::vector<float>& interp) {
                          expect_match(what, got, interp);
                          expect_match(what + " (C++ reference)", got, want);
                        },
                        kAllWarps, kWarps64);
  }
}

TEST_CASE("example fused_elu (f16) on the host targets matches the interpreter bit for bit", "[host][examples][f16]") {
  auto k = ex::make_fused_elu();
  for (std::int64_t n : kSizes) {
    std::mt19937 rng(kSeed + 1 + static_cast<std::uint32_t>(n));
    const auto x = random_values<ts::half>(n, rng, -3, 3);
    auto run = [&](ts::Executor e, int warps) {
      auto out = poisoned<ts::half>(n);
      auto opts = ex::fused_elu_options(n, e);
      opts.num_warps = warps;
      k[opts](x, out, 1.5f, -0.25f, static_cast<std::int32_t>(n));
      return out;
    };
    against_interpreter("fused_elu, n = " + std::to_string(n), run,
                        [](const std::string& what, const auto& got, const auto& want) { expect_match(what, got, want); },
                        kAllWarps, kWarps64);
  }
}

TEST_CASE("example broadcast_2d on the host targets matches the interpreter bit for bit", "[host][examples][2d]") {
  auto k = ex::make_broadcast_2d();
  for (auto [m, n] : {std::pair{1, 1}, std::pair{33, 1000}, std::pair{1025, 1023}}) {
    if (skip_when_sanitized(std::int64_t{m} * n)) continue;
    const std::int32_t stride = n + 3;
    std::mt19937 rng(kSeed + 2 + static_cast<std::uint32_t>(m));
    const std::size_t elems = static_cast<std::size_t>(m) * stride;
    const auto x = random_values<float>(elems, rng, -1, 1), s = random_values<float>(m, rng, -1, 1),
               b = random_values<float>(n, rng, -1, 1);
    auto run = [&](ts::Executor e, int warps) {
      auto out = poisoned<float>(elems);  // the padding must keep its poison
      auto opts = ex::broadcast_2d_options(m, n, e);
      opts.num_warps = warps;
      k[opts](x, s, b, out, m, n, stride);
      return out;
    };
    against_interpreter("broadcast_2d, " + std::to_string(m) + " x " + std::to_string(n), run,
                        [](const std::string& what, const auto& got, const auto& want) { expect_match(what, got, want); },
                        kAllWarps, kWarps64);
  }
}

TEST_CASE("example softmax on the host targets matches the interpreter", "[host][examples][norm]") {
  auto k = ex::make_softmax();
  for (auto [rows, cols] : kRowShapes) {
    if (skip_when_sanitized(rows * cols)) continue;
    std::mt19937 rng(kSeed + 3 + static_cast<std::uint32_t>(cols));
    const auto x = random_values<float>(static_cast<std::size_t>(rows * cols), rng, -4, 4);
    auto run = [&](ts::Executor e, int warps) {
      auto out = poisoned<float>(x.size());
      auto opts = ex::softmax_options(rows, cols, e);
      opts.num_warps = warps;
      k[opts](x, out, static_cast<std::int32_t>(cols), static_cast<std::int32_t>(cols));
      return out;
    };
    against_interpreter("softmax, " + std::to_string(rows) + " x " + std::to_string(cols), run,
                        [](const std::string& what, const auto& got, const auto& want) {
                          expect_match(what, got, want, relative(4e-6, 1e-30));
                        },
                        kAllWarps, kWarps64);
  }
}

TEST_CASE("example online softmax on the host targets matches the interpreter", "[host][examples][norm]") {
  auto k = ex::make_online_softmax();
  for (auto [rows, cols, block] : {std::array<std::int64_t, 3>{1, 1, 64}, {3, 1000, 256}, {64, 16411, 4096}}) {
    if (skip_when_sanitized(rows * cols)) continue;
    std::mt19937 rng(kSeed + 4 + static_cast<std::uint32_t>(cols));
    const auto x = random_values<float>(static_cast<std::size_t>(rows * cols), rng, -4, 4);
    auto run = [&](ts::Executor e, int warps) {
      auto out = poisoned<float>(x.size());
      auto opts = ex::online_softmax_options(rows, block, e);
      opts.num_warps = warps;
      k[opts](x, out, static_cast<std::int32_t>(cols), static_cast<std::int32_t>(cols));
      return out;
    };
    against_interpreter("online softmax, " + std::to_string(rows) + " x " + std::to_string(cols), run,
                        [](const std::string& what, const auto& got, const auto& want) {
                          expect_match(what, got, want, relative(1e-5, 1e-30));
                        },
                        kAllWarps, kWarps64);
  }
}

TEST_CASE("examples layer norm and RMSNorm forward on the host targets match the interpreter",
          "[host][examples][norm][f16]") {
  auto ln = ex::make_layer_norm_fwd();
  auto rms_norm = ex::make_rms_norm_fwd();
  for (auto [rows, cols] : kRowShapes) {
    if (skip_when_sanitized(rows * cols)) continue;
    std::mt19937 rng(kSeed + 5 + static_cast<std::uint32_t>(cols));
    const auto elems = static_cast<std::size_t>(rows * cols);
    const auto x = random_values<ts::half>(elems, rng, -2, 2), w = random_values<ts::half>(cols, rng, 0.5, 1.5),
               b = random_values<ts::half>(cols, rng, -1, 1);
    const auto n = static_cast<std::int32_t>(cols);
    using Out = std::tuple<std::vector<ts::half>, std::vector<float>, std::vector<float>>;
    auto run_ln = [&](ts::Executor e, int warps) {
      Out o{poisoned<ts::half>(elems), poisoned<float>(rows), poisoned<float>(rows)};
      auto opts = ex::layer_norm_options(rows, cols, e);
      opts.num_warps = warps;
      ln[opts](x, std::get<0>(o), w, b, std::get<1>(o), std::get<2>(o), n, n, 1e-5f);
      return o;
    };
    auto run_rms = [&](ts::Executor e, int warps) {
      Out o{poisoned<ts::half>(elems), std::vector<float>(rows, 0.f), poisoned<float>(rows)};
      auto opts = ex::layer_norm_options(rows, cols, e);
      opts.num_warps = warps;
      rms_norm[opts](x, std::get<0>(o), w, std::get<2>(o), n, n, 1e-6f);
      return o;
    };
    auto check = [](const std::string& what, const Out& got, const Out& want) {
      expect_match(what + ", y", std::get<0>(got), std::get<0>(want), f16_bound(rms(std::get<0>(want))));
      expect_match(what + ", mean", std::get<1>(got), std::get<1>(want), relative(1e-5, 1e-3));
      expect_match(what + ", rstd", std::get<2>(got), std::get<2>(want), relative(1e-5));
    };
    const std::string shape = std::to_string(rows) + " x " + std::to_string(cols);
    against_interpreter("layer_norm_fwd, " + shape, run_ln, check, kAllWarps, kWarps64);
    against_interpreter("rms_norm_fwd, " + shape, run_rms, check, kAllWarps, kWarps64);
  }
}

TEST_CASE("examples layer norm and RMSNorm backward on the host targets match the interpreter",
          "[host][examples][norm][f16]") {
  auto ln_dx = ex::make_layer_norm_bwd_dx();
  auto ln_dwdb = ex::make_layer_norm_bwd_dwdb();
  auto rms_dx = ex::make_rms_norm_bwd_dx();
  auto rms_dw = ex::make_rms_norm_bwd_dw();
  for (auto [rows, cols, programs] : {std::array<std::int64_t, 3>{1, 1, 1}, {37, 1000, 8}, {300, 3000, 40}}) {
    if (skip_when_sanitized(rows * cols)) continue;
    std::mt19937 rng(kSeed + 6 + static_cast<std::uint32_t>(cols));
    const auto elems = static_cast<std::size_t>(rows * cols);
    const auto x = random_values<ts::half>(elems, rng, 0.5, 2), dy = random_values<ts::half>(elems, rng, -1, 1),
               w = random_values<ts::half>(cols, rng, 0.5, 1.5);
    std::vector<float> mean(rows), rstd(rows);
    ex::layer_norm_stats(x, mean, rstd, rows, cols, 1e-5f);
    const auto m = static_cast<std::int32_t>(rows), n = static_cast<std::int32_t>(cols),
               p = static_cast<std::int32_t>(programs);
    using Out = std::tuple<std::vector<ts::half>, std::vector<ts::half>, std::vector<ts::half>>;
    auto run_ln = [&](ts::Executor e, int warps) {
      Out o{poisoned<ts::half>(elems), poisoned<ts::half>(cols), poisoned<ts::half>(cols)};
      auto dwp = poisoned<float>(programs * cols), dbp = poisoned<float>(programs * cols);
      auto opts = ex::norm_bwd_dx_options(cols, programs, e);
      opts.num_warps = warps;
      ln_dx[opts](x, dy, std::get<0>(o), w, mean, rstd, dwp, dbp, n, m, n);
      auto sum_opts = ex::partial_sum_options(cols, e);
      sum_opts.num_warps = warps;
      ln_dwdb[sum_opts](dwp, dbp, std::get<1>(o), std::get<2>(o), p, n);
      return o;
    };
    auto run_rms = [&](ts::Executor e, int warps) {
      Out o{poisoned<ts::half>(elems), poisoned<ts::half>(cols), std::vector<ts::half>(cols)};
      auto dwp = poisoned<float>(programs * cols);
      auto opts = ex::norm_bwd_dx_options(cols, programs, e);
      opts.num_warps = warps;
      rms_dx[opts](x, dy, std::get<0>(o), w, rstd, dwp, n, m, n);
      auto sum_opts = ex::partial_sum_options(cols, e);
      sum_opts.num_warps = warps;
      rms_dw[sum_opts](dwp, std::get<1>(o), p, n);
      return o;
    };
    auto check = [](const std::string& what, const Out& got, const Out& want) {
      expect_match(what + ", dx", std::get<0>(got), std::get<0>(want), f16_bound(rms(std::get<0>(want))));
      expect_match(what + ", dw", std::get<1>(got), std::get<1>(want), f16_bound(rms(std::get<1>(want))));
      expect_match(what + ", db", std::get<2>(got), std::get<2>(want), f16_bound(rms(std::get<2>(want))));
    };
    const std::string shape = std::to_string(rows) + " x " + std::to_string(cols);
    against_interpreter("layer_norm_bwd, " + shape, run_ln, check, kAllWarps, kWarps64);
    against_interpreter("rms_norm_bwd, " + shape, run_rms, check, kAllWarps, kWarps64);
  }
}

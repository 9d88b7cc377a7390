// Atomics on the host targets (tests/pipeline/atomics_kernels.hpp): host atomics, executed once per
// element by the thread that owns it (the lowering skips a layout's replicas) and returning old
// values through shared memory to every replica. Where the order of the atomics decides a result
// (old values, which lane wins a compare-and-swap), the check is the order-free invariant; the
// rest must match the interpreter exactly.
#include <algorithm>

#include "host_test_util.hpp"
#include "tests/pipeline/atomics_kernels.hpp"

using namespace host_test;
namespace ak = atomics_kernels;

namespace {

ts::LaunchOptions opts(ts::Executor e, std::int64_t n, int block, int warps, ts::MetaValues extra = {}) {
  ts::MetaValues meta = {{"BLOCK", block}};
  for (auto& kv : extra) meta.push_back(kv);
  return {.grid = {ts::cdiv(n, std::int64_t{block})}, .meta = meta, .num_warps = warps, .executor = e};
}

constexpr int kFew64[] = {1, 4, 32};

}  // namespace

TEST_CASE("histogram by atomic_add on the host targets counts every lane once", "[host][atomics]") {
  auto k = ak::make_histogram();
  // Blocks smaller than the layout's CTA tile (replicas), and a million elements.
  for (auto [n, block] : {std::array{1000, 16}, std::array{4096, 256}, std::array{77, 32}, std::array{1, 16},
                          std::array{(1 << 20) + 3, 4096}}) {
    if (skip_when_sanitized(n)) continue;
    std::mt19937 rng(kSeed + static_cast<std::uint32_t>(n));
    const auto x = random_values<std::int32_t>(n, rng, 0, 9);
    using Out = std::pair<std::vector<std::int32_t>, std::vector<std::int32_t>>;
    auto run = [&](ts::Executor e, int warps) {
      Out o{std::vector<std::int32_t>(10, 0), poisoned<std::int32_t>(n)};
      k[opts(e, n, block, warps, {{"RETURN", 1}})](x, o.first, o.second, n);
      return o;
    };
    against_interpreter("histogram, n = " + std::to_string(n) + ", block " + std::to_string(block), run,
                        [&](const std::string& what, const Out& got, const Out& want) {
                          expect_match(what + ": bins", got.first, want.first);
                          // The old counts of each bin are 0 .. count-1, each once, in some order.
                          std::vector<std::vector<std::int32_t>> seen(10);
                          for (std::int64_t i = 0; i < n; ++i)
                            if (x[i] >= 0 && x[i] < 10) seen[x[i]].push_back(got.second[i]);
                          std::int64_t bad = 0;
                          for (int b = 0; b < 10; ++b) {
                            std::sort(seen[b].begin(), seen[b].end());
                            for (std::size_t j = 0; j < seen[b].size(); ++j) bad += seen[b][j] != static_cast<std::int32_t>(j);
                          }
                          INFO(what << ": old counts that are not a permutation of 0 .. count-1: " << bad);
                          CHECK(bad == 0);
                        },
                        kAllWarps, kFew64);
  }
}

TEMPLATE_TEST_CASE("atomic_max and atomic_min on the host targets match the interpreter", "[host][atomics]",
                   std::int32_t, std::uint32_t, std::uint64_t, float) {
  using T = TestType;
  auto k = ak::make_max_min<T>();
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{2999}, std::int64_t{(1 << 20) + 3}}) {
    if (skip_when_sanitized(n)) continue;
    std::mt19937 rng(kSeed + 1 + static_cast<std::uint32_t>(n));
    const auto x = random_values<T>(n, rng, std::is_unsigned_v<T> ? 0 : -100000, 100000);
    auto run = [&](ts::Executor e, int warps) {
      std::vector<T> out{static_cast<T>(std::is_unsigned_v<T> ? 0 : -1e9), static_cast<T>(2e9)};
      k[opts(e, n, 1024, warps)](x, out, n);
      return out;
    };
    against_interpreter("max/min, n = " + std::to_string(n), run,
                        [](const std::string& what, const auto& got, const auto& want) { expect_match(what, got, want); },
                        kAllWarps, kFew64);
  }
}

TEMPLATE_TEST_CASE("float atomic_add on the host targets sums exactly where every order does", "[host][atomics]",
                   float, double, ts::half, ts::bfloat16) {
  using T = TestType;
  auto k = ak::make_float_sum<T>();
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{299}, std::int64_t{4099}}) {
    std::vector<T> x(n);
    for (std::int64_t i = 0; i < n; ++i) x[i] = T(static_cast<float>(i % 5));  // small sums: exact in any order
    auto run = [&](ts::Executor e, int warps) {
      std::vector<T> sum(4, T(0.f));
      k[opts(e, n, 32, warps)](x, sum, n);
      return sum;
    };
    against_interpreter("float sum, n = " + std::to_string(n), run,
                        [](const std::string& what, const auto& got, const auto& want) { expect_match(what, got, want); },
                        kAllWarps, kFew64);
  }
}

TEST_CASE("atomic_cas on the host targets claims each slot exactly once", "[host][atomics]") {
  auto k = ak::make_claim();
  const int n = 200, block = 32, slots = 8;
  auto run = [&](ts::Executor e, int warps) {
    std::pair<std::vector<std::int32_t>, std::vector<std::int32_t>> o{std::vector<std::int32_t>(slots, 0),
                                                                      poisoned<std::int32_t>(n)};
    k[opts(e, n, block, warps, {{"SLOTS", slots}})](o.first, o.second, n);
    return o;
  };
  against_interpreter("claim", run,
                      [&](const std::string& what, const auto& got, const auto& want) {
                        // Program 0 runs first on both and claims every slot; which of its lanes
                        // saw the 0 is up to the order of its threads.
                        expect_match(what + ": slots", got.first, want.first);
                        std::vector<int> zeros(slots, 0);
                        bool others_see_one = true;
                        for (int i = 0; i < n; ++i) {
                          if (got.second[i] == 0) ++zeros[i % slots];
                          else others_see_one &= got.second[i] == 1;
                        }
                        INFO(what);
                        CHECK(zeros == std::vector<int>(slots, 1));
                        CHECK(others_see_one);
                      },
                      kAllWarps, kFew64);
}

TEST_CASE("scalar atomics (tickets, or, and, xchg) on the host targets match the interpreter", "[host][atomics]") {
  auto k = ak::make_ticket();
  const int programs = 40, block = 16;
  using Out = std::tuple<std::vector<std::int32_t>, std::vector<std::int32_t>, std::vector<std::uint32_t>,
                         std::vector<std::int64_t>>;
  auto run = [&](ts::Executor e, int warps) {
    Out o{{5}, poisoned<std::int32_t>(programs * block), {0, 0xff}, {-1}};
    k[{.grid = {programs}, .meta = {{"BLOCK", block}}, .num_warps = warps, .executor = e}](
        std::get<0>(o), std::get<1>(o), std::get<2>(o), std::get<3>(o));
    return o;
  };
  against_interpreter("tickets", run,
                      [](const std::string& what, const Out& got, const Out& want) {
                        expect_match(what + ": counter", std::get<0>(got), std::get<0>(want));
                        expect_match(what + ": tickets", std::get<1>(got), std::get<1>(want));
                        expect_match(what + ": flags", std::get<2>(got), std::get<2>(want));
                        expect_match(what + ": last", std::get<3>(got), std::get<3>(want));
                      },
                      kAllWarps, kFew64);
}

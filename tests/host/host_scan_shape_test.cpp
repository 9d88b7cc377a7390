// Scans and the ops that move data between threads (reshape, trans, permute, join, split) on the
// host targets against the interpreter, bit for bit. The scans include two combines that are
// associative but not commutative ("last non-zero", "first non-zero"), so that any step combining
// lanes, warps or repetitions in the wrong order gives a wrong element.
#include "host_test_util.hpp"
#include "tests/pipeline/scan_kernels.hpp"

using namespace host_test;

TEST_CASE("scans along both axes and in reverse on the host targets match the interpreter", "[host][scan]") {
  std::uniform_int_distribution<int> d(-3, 3);
  auto k = scan_test::scan_kernel();
  for (auto [rows, cols, warps] : scan_test::kScanShapes)
    for (int kind : {0, 3, 4})
      for (int axis = 0; axis < 2; ++axis)
        for (bool reverse : {false, true}) {
          std::mt19937 rng(kSeed + static_cast<std::uint32_t>(rows * 131 + cols + kind));
          std::vector<std::int32_t> x(static_cast<std::size_t>(rows) * cols);
          for (auto& v : x) v = d(rng);
          // Zeros matter to the "non-zero" combines: a third of them.
          for (std::size_t i = 0; i < x.size(); i += 3) x[i] = 0;
          auto run = [&](ts::Executor e, int w) {
            auto out = poisoned<std::int32_t>(x.size());
            k[{.grid = {1}, .meta = scan_test::scan_meta(rows, cols, kind, axis, reverse), .num_warps = w, .executor = e}](
                x, out);
            return out;
          };
          const int warps32[] = {warps}, warps64[] = {std::max(1, warps / 2)};
          const auto want = scan_test::reference(x, rows, cols, kind, axis, reverse);
          against_interpreter(
              "scan kind " + std::to_string(kind) + " of " + std::to_string(rows) + " x " + std::to_string(cols) +
                  " along " + std::to_string(axis) + (reverse ? " reversed" : ""),
              run,
              [&](const std::string& what, const std::vector<std::int32_t>& got, const std::vector<std::int32_t>& interp) {
                expect_match(what, got, interp);
                expect_match(what + " (C++ reference)", got, want);
              },
              warps32, warps64);
        }
}

TEST_CASE("scans over every num_warps on the host targets match the interpreter", "[host][scan]") {
  auto k = scan_test::scan_kernel();
  std::mt19937 rng(kSeed);
  std::uniform_int_distribution<int> d(-3, 3);
  for (auto [rows, cols] : {std::pair{32, 128}, std::pair{1, 2048}})
    for (int axis = 0; axis < 2; ++axis) {
      std::vector<std::int32_t> x(static_cast<std::size_t>(rows) * cols);
      for (auto& v : x) v = d(rng);
      auto run = [&](ts::Executor e, int w) {
        auto out = poisoned<std::int32_t>(x.size());
        k[{.grid = {1}, .meta = scan_test::scan_meta(rows, cols, 3, axis, axis == 1), .num_warps = w, .executor = e}](
            x, out);
        return out;
      };
      const int warps64[] = {1, 8, 32};
      against_interpreter("scan of " + std::to_string(rows) + " x " + std::to_string(cols) + " along " + std::to_string(axis),
                          run, [](const std::string& what, const auto& got, const auto& want) { expect_match(what, got, want); },
                          kAllWarps, warps64);
    }
}

namespace {

template <class T>
auto make_transpose() {
  return ts::kernel("transpose", [](ts::Ptr<T> x, ts::Ptr<T> out, ts::Int R, ts::Int C) {
    const int BR = ts::meta("BR"), BC = ts::meta("BC");
    auto rows = ts::program_id(0) * BR + ts::arange(0, BR);
    auto cols = ts::program_id(1) * BC + ts::arange(0, BC);
    auto mask = (rows.col() < R) && (cols.row() < C);
    auto tile = ts::load(x + rows.col() * C + cols.row(), mask);
    ts::store(out + cols.col() * R + rows.row(), ts::trans(tile), ts::trans(mask));
  });
}

auto make_permute3() {
  return ts::kernel("permute3", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n) {
    const int A = ts::meta("A"), B = ts::meta("B"), C = ts::meta("C");
    auto offs = ts::program_id(0) * (A * B * C) + ts::arange(0, A * B * C);
    auto mask = offs < n;
    auto v = ts::load(x + offs, mask, 0.0f).reshape({A, B, C});
    ts::store(out + offs, ts::permute(v, {2, 0, 1}).reshape({A * B * C}), mask);
  });
}

auto make_join_split() {
  return ts::kernel("join_split", [](ts::Ptr<float> a, ts::Ptr<float> b, ts::Ptr<float> p, ts::Ptr<float> ab,
                                     ts::Ptr<float> lo, ts::Ptr<float> hi, ts::Int n) {
    const int BLOCK = ts::meta("BLOCK");
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto pair_offs = offs.col() * 2 + ts::arange(0, 2).row();
    auto pair_mask = pair_offs < n * 2;
    ts::store(ab + pair_offs, ts::join(ts::load(a + offs, mask), ts::load(b + offs, mask)), pair_mask);
    auto [l, h] = ts::split(ts::load(p + pair_offs, pair_mask));
    ts::store(lo + offs, l, mask);
    ts::store(hi + offs, h, mask);
  });
}

constexpr int kFew64[] = {1, 8};

}  // namespace

TEMPLATE_TEST_CASE("transposes on the host targets match the interpreter", "[host][shape]", float, ts::half,
                   std::int8_t, double) {
  using T = TestType;
  auto k = make_transpose<T>();
  for (auto [r, c, br, bc] : {std::array{37, 70, 16, 32}, std::array{1, 50, 1, 64}, std::array{50, 1, 64, 1},
                              std::array{1000, 1049, 64, 64}, std::array{8, 8, 8, 8}, std::array{5, 3, 2, 2}}) {
    if (skip_when_sanitized(std::int64_t{r} * c)) continue;
    std::mt19937 rng(kSeed + static_cast<std::uint32_t>(r * 7 + c));
    const auto x = random_values<T>(static_cast<std::size_t>(r) * c, rng, -100, 100);
    auto run = [&](ts::Executor e, int warps) {
      auto out = poisoned<T>(x.size());
      k[{.grid = {ts::cdiv(r, br), ts::cdiv(c, bc)}, .meta = {{"BR", br}, {"BC", bc}}, .num_warps = warps,
         .executor = e}](x, out, r, c);
      return out;
    };
    against_interpreter("transpose " + std::to_string(r) + " x " + std::to_string(c) + " in " + std::to_string(br) +
                            " x " + std::to_string(bc) + " blocks",
                        run, [](const std::string& what, const auto& got, const auto& want) { expect_match(what, got, want); },
                        kAllWarps, kFew64);
  }
}

TEST_CASE("reshape and permute on the host targets match the interpreter", "[host][shape]") {
  auto k = make_permute3();
  for (auto [a, b, c, n] : {std::array{2, 4, 8, 100000}, std::array{1, 16, 2, 64}, std::array{8, 1, 4, 33},
                            std::array{16, 16, 4, 5000}}) {
    if (skip_when_sanitized(n)) continue;
    std::mt19937 rng(kSeed + static_cast<std::uint32_t>(n));
    const auto x = random_values<float>(n, rng, -100, 100);
    auto run = [&](ts::Executor e, int warps) {
      auto out = poisoned<float>(n);
      k[{.grid = {ts::cdiv(n, a * b * c)}, .meta = {{"A", a}, {"B", b}, {"C", c}}, .num_warps = warps, .executor = e}](
          x, out, n);
      return out;
    };
    against_interpreter("permute " + std::to_string(a) + " x " + std::to_string(b) + " x " + std::to_string(c), run,
                        [](const std::string& what, const auto& got, const auto& want) { expect_match(what, got, want); },
                        kAllWarps, kFew64);
  }
}

TEST_CASE("join and split on the host targets match the interpreter", "[host][shape]") {
  auto k = make_join_split();
  for (auto [n, block] : {std::array{77, 32}, std::array{1, 16}, std::array{(1 << 20) + 3, 4096},
                          std::array{4097, 1024}, std::array{10, 2}}) {
    if (skip_when_sanitized(n)) continue;
    std::mt19937 rng(kSeed + static_cast<std::uint32_t>(n));
    const auto a = random_values<float>(n, rng, -100, 100), b = random_values<float>(n, rng, -100, 100),
               p = random_values<float>(2 * static_cast<std::size_t>(n), rng, -100, 100);
    using Out = std::array<std::vector<float>, 3>;
    auto run = [&](ts::Executor e, int warps) {
      Out o{poisoned<float>(2 * static_cast<std::size_t>(n)), poisoned<float>(n), poisoned<float>(n)};
      k[{.grid = {ts::cdiv(n, block)}, .meta = {{"BLOCK", block}}, .num_warps = warps, .executor = e}](
          a, b, p, o[0], o[1], o[2], n);
      return o;
    };
    against_interpreter("join/split, n = " + std::to_string(n) + ", block " + std::to_string(block), run,
                        [](const std::string& what, const Out& got, const Out& want) {
                          expect_match(what + ": join", got[0], want[0]);
                          expect_match(what + ": split lo", got[1], want[1]);
                          expect_match(what + ": split hi", got[2], want[2]);
                        },
                        kAllWarps, kFew64);
  }
}

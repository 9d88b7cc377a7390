// Reductions on the host targets against the interpreter, bit for bit: sum, max, min, argmax,
// argmin and a user combine (xor), along either axis of a 2-D tile and of a 1-D one to a scalar,
// over a matrix split into blocks, for every num_warps and block shape (lanes and warps along the
// axis or across it, tiles the layout replicates). Float inputs are small integers, whose sums
// every order computes exactly, so that the tree of thread, butterfly and warp steps must give the
// interpreter's left-to-right result exactly: a dropped or doubled step is a wrong number.
#include "host_test_util.hpp"

using namespace host_test;

namespace {

// Per program (pid_m, pid_n) of an M x N matrix (row stride `stride`), over its BM x BN block:
//   col_sum[pid_m, j] = sum of the block's column j;  row_max[i] of each block row (per pid_n) ...
// Every output is indexed so that each program writes its own elements.
template <class T>
auto make_reduce() {
  return ts::kernel("reduce2d", [](ts::Ptr<T> x, ts::Ptr<T> col_sum, ts::Ptr<T> row_max, ts::Ptr<T> col_min,
                                   ts::Ptr<std::int32_t> row_argmax, ts::Ptr<std::int32_t> col_argmin,
                                   ts::Ptr<T> row_xor, ts::Ptr<T> total, ts::Int m, ts::Int n, ts::Int stride) {
    const int BM = static_cast<int>(ts::meta("BM")), BN = static_cast<int>(ts::meta("BN"));
    auto pm = ts::program_id(0), pn = ts::program_id(1);
    auto rows = pm * BM + ts::arange(0, BM);
    auto cols = pn * BN + ts::arange(0, BN);
    auto mask = (rows.col() < m) && (cols.row() < n);
    auto v = ts::load(x + rows.col() * stride + cols.row(), mask, 0);
    // Masked elements must never win a max or a min.
    auto lowest = ts::full<T>({BM, BN}, std::is_integral_v<T> ? static_cast<double>(std::numeric_limits<T>::lowest()) : -1e4);
    auto highest = ts::full<T>({BM, BN}, std::is_integral_v<T> ? static_cast<double>(std::numeric_limits<T>::max()) : 1e4);
    auto col_mask = cols < n;
    auto row_mask = rows < m;
    // Partial results per block: column results go to row pm of a [grid_m, N] matrix, row results
    // to column pn of an [M, grid_n] one.
    auto grid_n = ts::num_programs(1);
    ts::store(col_sum + pm * n + cols, ts::sum(v, 0).template to<T>(), col_mask);
    ts::store(row_max + rows * grid_n + pn, ts::max(ts::where(mask, v, lowest), 1), row_mask);
    ts::store(col_min + pm * n + cols, ts::min(ts::where(mask, v, highest), 0), col_mask);
    ts::store(row_argmax + rows * grid_n + pn, ts::argmax(ts::where(mask, v, lowest), 1), row_mask);
    ts::store(col_argmin + pm * n + cols, ts::argmin(ts::where(mask, v, highest), 0), col_mask);
    if constexpr (std::is_integral_v<T>)
      ts::store(row_xor + rows * grid_n + pn, ts::reduce(v, 1, [](ts::Tile<T> a, ts::Tile<T> b) { return a ^ b; }),
                row_mask);
    else
      ts::store(row_xor + rows * grid_n + pn, ts::reduce(v, 1, [](ts::Tile<T> a, ts::Tile<T> b) { return a - b * 0 + b; }),
                row_mask);
    ts::store(total + pm * grid_n + pn, ts::sum(ts::sum(v, 1), 0).template to<T>());
  });
}

template <class T>
void check_reduce(std::int64_t m, std::int64_t n, int bm, int bn, std::span<const int> warps32,
                  std::span<const int> warps64) {
  auto k = make_reduce<T>();
  const std::int64_t stride = n + 1, gm = ts::cdiv(m, bm), gn = ts::cdiv(n, bn);
  std::mt19937 rng(kSeed + static_cast<std::uint32_t>(m * 31 + n + bm * 7 + bn));
  // Small integers (as T): every order of summation is exact.
  const auto ints = random_values<std::int32_t>(static_cast<std::size_t>(m * stride), rng, std::is_unsigned_v<T> ? 0 : -8, 8);
  std::vector<T> x(ints.size());
  for (std::size_t i = 0; i < ints.size(); ++i) x[i] = static_cast<T>(static_cast<float>(ints[i]));
  using Out = std::tuple<std::vector<T>, std::vector<T>, std::vector<T>, std::vector<std::int32_t>,
                         std::vector<std::int32_t>, std::vector<T>, std::vector<T>>;
  auto run = [&](ts::Executor e, int warps) {
    Out o{poisoned<T>(gm * n), poisoned<T>(m * gn), poisoned<T>(gm * n), poisoned<std::int32_t>(m * gn),
          poisoned<std::int32_t>(gm * n), poisoned<T>(m * gn), poisoned<T>(gm * gn)};
    k[{.grid = {gm, gn}, .meta = {{"BM", bm}, {"BN", bn}}, .num_warps = warps, .executor = e}](
        x, std::get<0>(o), std::get<1>(o), std::get<2>(o), std::get<3>(o), std::get<4>(o), std::get<5>(o),
        std::get<6>(o), static_cast<std::int32_t>(m), static_cast<std::int32_t>(n), static_cast<std::int32_t>(stride));
    return o;
  };
  const std::string label = std::string("reduce ") + type_name<T>() + " " + std::to_string(m) + " x " +
                            std::to_string(n) + " in " + std::to_string(bm) + " x " + std::to_string(bn) + " blocks";
  against_interpreter(label, run,
                      [](const std::string& what, const Out& got, const Out& want) {
                        expect_match(what + ": column sums", std::get<0>(got), std::get<0>(want));
                        expect_match(what + ": row max", std::get<1>(got), std::get<1>(want));
                        expect_match(what + ": column min", std::get<2>(got), std::get<2>(want));
                        expect_match(what + ": row argmax", std::get<3>(got), std::get<3>(want));
                        expect_match(what + ": column argmin", std::get<4>(got), std::get<4>(want));
                        expect_match(what + ": row combine", std::get<5>(got), std::get<5>(want));
                        expect_match(what + ": block totals", std::get<6>(got), std::get<6>(want));
                      },
                      warps32, warps64);
}

constexpr int kWarps64[] = {1, 4, 32};
constexpr int kFew32[] = {1, 8, 32};
constexpr int kFew64[] = {2};

}  // namespace

TEST_CASE("reductions of f32 along both axes on the host targets match the interpreter", "[host][reduce]") {
  // Blocks: wide rows, tall columns, square, one row, one column, a tile smaller than any layout's
  // CTA tile (replicated); matrices from one element to a million.
  for (auto [m, n, bm, bn] : {std::array<int, 4>{1, 1, 1, 1}, {37, 1000, 4, 256}, {1000, 37, 256, 4},
                              {64, 64, 32, 32}, {3, 5000, 1, 4096}, {5000, 3, 1024, 1}, {9, 9, 2, 2},
                              {1025, 1023, 8, 128}})
    if (!skip_when_sanitized(std::int64_t{m} * n)) check_reduce<float>(m, n, bm, bn, kAllWarps, kWarps64);
}

TEMPLATE_TEST_CASE("reductions of integers and narrow floats on the host targets match the interpreter",
                   "[host][reduce]", std::int32_t, std::int64_t, std::uint8_t, std::int16_t, ts::half, double) {
  // 1 x 4096 blocks: one output per row across all the warps, so that with 2 warps of 64 an
  // argmax's 1- or 2-byte values fill 2 or 4 bytes of its region before the i32 indices (which
  // were stored misaligned until each operand's part was aligned: random program seed 2515).
  for (auto [m, n, bm, bn] : {std::array<int, 4>{37, 1000, 4, 256}, {1000, 37, 256, 4}, {9, 9, 2, 2}, {3, 5000, 1, 4096}})
    check_reduce<TestType>(m, n, bm, bn, kFew32, kFew64);
}

TEST_CASE("many column sums in a row share shared memory past its budget and still match the interpreter",
          "[host][reduce]") {
  // Ten column sums of a 128x128 f32 block, each of the block times another constant: with the
  // warps along the columns' axis each needs a region of (warps x 128) floats, 40 KB in all at 8
  // warps, past analysis::kSeparateRegionsBytes. The sums then reuse one region, each one's writes
  // after a barrier that orders the last one's reads (checked on the compiled IR below: the host
  // executor's warps need not interleave so as to expose a missing one), and match the interpreter.
  constexpr int kSums = 10, kBlock = 128;
  auto k = ts::kernel("many_sums", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int m, ts::Int n) {
    auto pm = ts::program_id(0);
    auto rows = pm * kBlock + ts::arange(0, kBlock);
    auto cols = ts::arange(0, kBlock);
    auto v = ts::load(x + rows.col() * n + cols.row(), (rows.col() < m) && (cols.row() < n), 0);
    for (int i = 0; i < kSums; ++i)
      ts::store(out + (pm * kSums + i) * kBlock + cols, ts::sum(v * static_cast<float>(i + 1), 0), cols < n);
  });
  const std::int64_t m = 300, n = kBlock, grid = ts::cdiv(m, kBlock);
  std::mt19937 rng(kSeed);
  const auto ints = random_values<std::int32_t>(static_cast<std::size_t>(m * n), rng, -8, 8);
  const std::vector<float> x(ints.begin(), ints.end());
  auto launch_options = [&](ts::Executor e, int warps) {
    return ts::LaunchOptions{.grid = {grid}, .num_warps = warps, .executor = e};
  };
  {  // The compiled IR (warps of 32, as the Host executor's) shares: barriers before the sums' writes.
    std::vector<float> out(static_cast<std::size_t>(grid * kSums * kBlock));
    const auto art = k.warmup("sm_90a", launch_options(ts::Executor::Auto, 8), std::span<const float>(x),
                              std::span<float>(out), static_cast<std::int32_t>(m), static_cast<std::int32_t>(n));
    std::size_t marked = 0;
    for (std::size_t at = art.ir.find("reduce"); at != std::string::npos; at = art.ir.find("reduce", at + 1)) {
      const std::size_t line_end = art.ir.find('\n', at);
      marked += art.ir.substr(at, line_end - at).find("barrier_before_writes") != std::string::npos;
    }
    CHECK(marked >= kSums - 1);
  }
  against_interpreter("ten column sums", [&](ts::Executor e, int warps) {
    auto out = poisoned<float>(grid * kSums * kBlock);
    k[launch_options(e, warps)](x, out, static_cast<std::int32_t>(m), static_cast<std::int32_t>(n));
    return out;
  }, [](const std::string& what, const std::vector<float>& got, const std::vector<float>& want) {
    expect_match(what, got, want);
  }, kFew32, kFew64);
}

// GPU tests of atomics: the same kernels (tests/pipeline/atomics_kernels.hpp) on the GPU and on the
// interpreter. Counts must be exact; where the GPU's order of updates may differ from the
// interpreter's (old values, who wins a compare-and-swap), the checks are order-free: every update
// is seen exactly once. Tiles smaller than the CTA tile (16 elements in 4 warps) are the case
// where a replicated element would be updated several times without the owner predicate.
// Results are compared element by element (compare.hpp), exactly.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "compare.hpp"
#include "tests/pipeline/atomics_kernels.hpp"

namespace ts = tessera;
namespace ak = atomics_kernels;

namespace {

constexpr std::uint32_t kSeed = 20261202;

constexpr ts::Executor kExecs[2] = {ts::Executor::Cuda, ts::Executor::Interpreter};

template <class T>
ts::Buffer<T> upload(const std::vector<T>& v, ts::Executor ex) {
  return ts::Buffer<T>::from_host(std::span<const T>(v), ex);
}

ts::LaunchOptions opts(std::int64_t n, int block, int warps, ts::Executor ex, ts::MetaValues extra = {}) {
  ts::MetaValues meta = {{"BLOCK", block}};
  for (auto& kv : extra) meta.push_back(kv);
  return {.grid = {ts::cdiv(n, std::int64_t{block})}, .meta = meta, .num_warps = warps, .executor = ex};
}

}  // namespace

TEST_CASE("GPU histogram counts match the interpreter exactly, replicated tiles included", "[gpu][atomics]") {
  auto k = ak::make_histogram();
  std::mt19937 rng(kSeed);
  for (auto [n, block, warps] : {std::array{1000, 16, 4}, std::array{100000, 16, 8}, std::array{100000, 1024, 4},
                                 std::array{4097, 64, 4}, std::array{3000, 2, 1}}) {
    INFO("n = " << n << ", block = " << block << ", warps = " << warps << ", seed = " << kSeed);
    std::uniform_int_distribution<std::int32_t> bin(0, 6);
    std::vector<std::int32_t> x(n);
    for (auto& v : x) v = bin(rng);
    std::vector<std::int32_t> bins[2], old[2];
    for (int e = 0; e < 2; ++e) {
      auto dx = upload(x, kExecs[e]);
      auto db = upload(std::vector<std::int32_t>(7, 0), kExecs[e]);
      auto dold = upload(std::vector<std::int32_t>(n, -1), kExecs[e]);
      k[opts(n, block, warps, kExecs[e], {{"RETURN", 1}})](dx, db, dold, n);
      ts::synchronize(kExecs[e]);
      bins[e] = db.to_host();
      old[e] = dold.to_host();
    }
    gpu_test::check_equal("histogram bins, GPU vs interpreter", bins[0], bins[1]);
    // Each bin's old values are 0 .. count-1, each once: every lane's update applied and seen once.
    std::map<std::int32_t, std::vector<std::int32_t>> seen;
    for (int i = 0; i < n; ++i) seen[x[i]].push_back(old[0][i]);
    for (auto& [b, olds] : seen) {
      std::sort(olds.begin(), olds.end());
      std::vector<std::int32_t> expect(olds.size());
      for (std::size_t i = 0; i < expect.size(); ++i) expect[i] = static_cast<std::int32_t>(i);
      gpu_test::check_equal("old values of bin " + std::to_string(b), olds, expect);
    }
  }
}

TEST_CASE("GPU atomic max/min and float sums match the interpreter", "[gpu][atomics]") {
  std::mt19937 rng(kSeed);
  std::vector<std::int32_t> xi(5000);
  for (auto& v : xi) v = static_cast<std::int32_t>(rng() % 2000000) - 1000000;
  auto kmm = ak::make_max_min<std::int32_t>();
  std::vector<std::int32_t> r[2];
  for (int e = 0; e < 2; ++e) {
    auto dx = upload(xi, kExecs[e]);
    auto dout = upload(std::vector<std::int32_t>{INT32_MIN, INT32_MAX}, kExecs[e]);
    kmm[opts(4999, 16, 4, kExecs[e])](dx, dout, 4999);
    ts::synchronize(kExecs[e]);
    r[e] = dout.to_host();
  }
  gpu_test::check_equal("max and min, GPU vs interpreter", r[0], r[1]);

  auto sums = [&](auto tag) {
    using T = decltype(tag);
    auto k = ak::make_float_sum<T>();
    std::vector<T> x(3001);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = T(static_cast<float>(i % 3));
    std::vector<float> got[2];
    for (int e = 0; e < 2; ++e) {
      auto dx = upload(x, kExecs[e]);
      auto ds = upload(std::vector<T>(4, T(0.f)), kExecs[e]);
      k[opts(250, 16, 4, kExecs[e])](dx, ds, 250);  // small sums: exact in every order, bf16 too
      ts::synchronize(kExecs[e]);
      for (T v : ds.to_host()) got[e].push_back(static_cast<float>(v));
    }
    gpu_test::check_equal("float sums, GPU vs interpreter", got[0], got[1]);
  };
  sums(float{});
  sums(double{});
  sums(ts::half{});
  sums(ts::bfloat16{});
}

TEST_CASE("GPU compare-and-swap claims each slot once, scalar tickets are unique", "[gpu][atomics]") {
  const int n = 4096, block = 16, slots = 64;
  auto kc = ak::make_claim();
  auto ds = upload(std::vector<std::int32_t>(slots, 0), ts::Executor::Cuda);
  auto dseen = upload(std::vector<std::int32_t>(n, -1), ts::Executor::Cuda);
  kc[opts(n, block, 4, ts::Executor::Cuda, {{"SLOTS", slots}})](ds, dseen, n);
  ts::synchronize(ts::Executor::Cuda);
  const auto s = ds.to_host();
  const auto seen = dseen.to_host();
  for (int j = 0; j < slots; ++j) {
    INFO("slot " << j);
    int zeros = 0, winner = -1;
    for (int i = j; i < n; i += slots)
      if (seen[i] == 0) ++zeros, winner = i / block;
    CHECK(zeros == 1);
    CHECK(s[j] == winner + 1);
    for (int i = j; i < n; i += slots)
      if (seen[i] != 0) CHECK(seen[i] == s[j]);
  }

  auto kt = ak::make_ticket();
  const int programs = 300;
  auto counter = upload(std::vector<std::int32_t>{5}, ts::Executor::Cuda);
  auto tickets = upload(std::vector<std::int32_t>(programs * block, -1), ts::Executor::Cuda);
  auto flags = upload(std::vector<std::uint32_t>{0, 0xff}, ts::Executor::Cuda);
  auto last = upload(std::vector<std::int64_t>{-1}, ts::Executor::Cuda);
  kt[{.grid = {programs}, .meta = {{"BLOCK", block}}, .num_warps = 4, .executor = ts::Executor::Cuda}](
      counter, tickets, flags, last);
  ts::synchronize(ts::Executor::Cuda);
  CHECK(counter.to_host()[0] == 5 + programs);
  const auto t = tickets.to_host();
  std::vector<std::int32_t> firsts;
  for (int p = 0; p < programs; ++p) {
    firsts.push_back(t[p * block]);
    for (int i = 1; i < block; ++i) CHECK(t[p * block + i] == t[p * block]);  // the broadcast reached all
  }
  std::sort(firsts.begin(), firsts.end());
  for (int p = 0; p < programs; ++p) CHECK(firsts[p] == 5 + p);
  CHECK(flags.to_host() == std::vector<std::uint32_t>{0xffffffffu, 0xfeu});
  const auto l = last.to_host()[0];
  CHECK((l >= 5 && l < 5 + programs));
}

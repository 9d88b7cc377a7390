// ts::max_contiguous and ts::multiple_of (Triton's hints; ops.def `assume`) through the public launch
// path: what the compiler gains from them (16-byte loads of rows wrapped with % n, as Triton's
// matmul tutorial wraps its rows), and the interpreter's check of every promise, whose breach is a
// ProgramError naming the user's line. Also the cache and eviction hints of loads and stores in
// the PTX, assembled by ptxas.
#include <catch2/catch.hpp>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/tool_paths.hpp"
#include "tests/common/language_reference.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tessera.hpp"

namespace ts = tessera;
using namespace tessera::test;
using Catch::Contains;

namespace {

constexpr std::uint32_t kSeed = 20261203;
constexpr int kBlock = 256;

// HINT 0: out[i] = a[i % n] with no promise; 1: the rows promised as runs of BLOCK from multiples
// of BLOCK (true when n is a multiple of BLOCK); 2: multiple_of alone, on rows the compiler
// already knows to be runs of BLOCK; 3: multiple_of on those rows + 1 (a false promise);
// 4: the pointers promised 16-byte aligned.
auto make_wrapped_copy() {
  return ts::kernel("wrapped_copy", [](ts::Ptr<float> a, ts::Ptr<float> out, ts::Int n) {
    const int hint = ts::meta("HINT");
    auto offs = ts::program_id(0) * kBlock + ts::arange(0, kBlock);
    auto rows = offs % n;
    if (hint == 1) rows = ts::max_contiguous(ts::multiple_of(rows, kBlock), kBlock);
    if (hint == 2) rows = ts::multiple_of(offs, kBlock) % n;
    if (hint == 3) rows = ts::multiple_of(offs + 1, 16) % n;
    auto src = a + rows;
    if (hint == 4) src = ts::multiple_of(a + offs, 16);
    ts::store(out + offs, ts::load(src));
  });
}

ts::LaunchOptions options(int hint, std::int64_t programs, ts::Executor e = ts::Executor::Interpreter) {
  return {.grid = {programs}, .meta = {{"HINT", hint}}, .num_warps = 4, .executor = e};
}

std::vector<float> random_floats(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-10.f, 10.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// The global loads of `ptx`: how many move 4 elements, and how many one (whatever cache suffix).
std::pair<int, int> global_loads(const std::string& ptx) {
  int v4 = 0, scalar = 0;
  std::istringstream in(ptx);
  for (std::string line; std::getline(in, line);) {
    if (line.find("ld.global") == std::string::npos) continue;
    if (line.find(".v4.") != std::string::npos) ++v4;
    else if (line.find(".v2.") == std::string::npos) ++scalar;
  }
  return {v4, scalar};
}

}  // namespace

TEST_CASE("max_contiguous(multiple_of(rows % n)) loads rows 16 bytes at a time, as without % n",
          "[pipeline][hints]") {
  auto k = make_wrapped_copy();
  std::mt19937 rng(kSeed);
  const int n = 4 * kBlock;
  auto a = random_floats(n, rng);
  std::vector<float> out(2 * n);
  auto args = decltype(k)::arg_values(a, out, n);
  const std::vector<ts::ArgValue> argv(args.begin(), args.end());
  auto loads = [&](int hint, const char* arch) {
    const auto ptx = ts::detail::compile_only(k.def(), options(hint, 8), argv, arch);
    return global_loads(ptx.assembly);
  };
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    const auto [v4_plain, scalar_plain] = loads(0, arch);
    CHECK(v4_plain == 0);  // a remainder proves nothing: element by element
    CHECK(scalar_plain > 0);
    const auto [v4_hinted, scalar_hinted] = loads(1, arch);
    CHECK(v4_hinted > 0);
    CHECK(scalar_hinted == 0);
  }
  // And the values: out[i] = a[i % n] over two wraps, on the interpreter (which checks the promise).
  for (int hint : {0, 1, 2}) {
    std::fill(out.begin(), out.end(), -1.f);
    k[options(hint, 2 * n / kBlock)](a, out, n);
    std::size_t wrong = 0;
    for (int i = 0; i < 2 * n; ++i) wrong += out[i] != a[i % n];
    INFO("hint " << hint);
    CHECK(wrong == 0);
  }
}

TEST_CASE("a broken max_contiguous or multiple_of promise is a ProgramError naming the line", "[pipeline][hints]") {
  auto k = make_wrapped_copy();
  std::mt19937 rng(kSeed + 1);
  // n = 1000: the fourth run of 256 wraps at 1000, so its rows do not count up by one throughout.
  std::vector<float> a = random_floats(1000, rng), out(1024);
  REQUIRE_THROWS_AS(k[options(1, 4)](a, out, 1000), ts::ProgramError);
  REQUIRE_THROWS_WITH(k[options(1, 4)](a, out, 1000),
                      Contains("max_contiguous at ") && Contains("hints_test.cpp:") &&
                          Contains("runs of 256 along dim 0 count up by one is broken: element [232] is 0 after 999"));
  // The same kernel with n = 1024 keeps the promise (the first test case) ...
  // ... and offs + 1 starts its runs of 256 at 1, 257, ...: not multiples of 16.
  std::vector<float> b = random_floats(1024, rng);
  REQUIRE_THROWS_WITH(k[options(3, 4)](b, out, 1024),
                      Contains("multiple_of at ") && Contains("hints_test.cpp:") &&
                          Contains("element [0] (the first of a run of 256 along dim 0) is 1"));
  // Pointers divide in bytes: a + 1 is 4 bytes past a 16-byte boundary.
  std::vector<float> c = random_floats(1024 + 4, rng);
  REQUIRE(reinterpret_cast<std::uintptr_t>(c.data()) % 16 == 0);  // operator new aligns to 16
  CHECK_NOTHROW(k[options(4, 4)](c, out, 1024));
  float* shifted = c.data() + 1;
  REQUIRE_THROWS_WITH(k[options(4, 4)](shifted, out, 1024),
                      Contains("multiple_of at ") && Contains("each run's address is a multiple of 16"));
}

TEST_CASE("max_contiguous and multiple_of refuse what they cannot mean, at the user's line", "[pipeline][hints]") {
  auto k = ts::kernel("bad_hint", [](ts::Ptr<float> a, ts::Int n) {
      const int what = ts::meta("WHAT");
      auto offs = ts::arange(0, 64);
      auto grid = offs.col() * 64 + offs.row();
      if (what == 0) ts::store(a + ts::max_contiguous(offs, 24), 1.f);
      if (what == 1) ts::store(a + ts::max_contiguous(offs, 128), 1.f);
      if (what == 2) ts::store(a + ts::multiple_of(offs, 0), 1.f);
      if (what == 3) ts::store(a + ts::multiple_of(grid, 16), 1.f);  // one value for a 2-D tile
      if (what == 4) ts::store(a + ts::multiple_of(n, 16), 1.f);      // a scalar is fine
  });
  std::vector<float> buf(64 * 64 + 64);
  auto bad = [&](int what) {
    k[{.grid = {1}, .meta = {{"WHAT", what}}, .num_warps = 4, .executor = ts::Executor::Interpreter}](buf, 16);
  };
  REQUIRE_THROWS_WITH(bad(0), Contains("hints_test.cpp:") && Contains("max_contiguous: contiguity hint 24 for dim 0"));
  REQUIRE_THROWS_WITH(bad(1), Contains("a power of two dividing the dim (64)"));
  REQUIRE_THROWS_WITH(bad(2), Contains("multiple_of: divisibility hint 0 for dim 0"));
  REQUIRE_THROWS_WITH(bad(3), Contains("divisibility hint has 1 entries") && Contains("give one per dim (2)"));
  CHECK_NOTHROW(bad(4));
}

TEST_CASE("cache and eviction hints become PTX qualifiers that ptxas accepts", "[pipeline][hints][nvptx]") {
  const std::string ptxas = ptxas_or_skip();
  auto k = language_reference::make_hinted_copies();
  const int n = 4096;
  std::vector<float> x(n), out(7 * n);
  auto args = decltype(k)::arg_values(x, out, n);
  const std::vector<ts::ArgValue> argv(args.begin(), args.end());
  const ts::LaunchOptions opts{.grid = {n / 256}, .meta = {{"BLOCK", 256}, {"FULL", 1}}, .num_warps = 4};
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    const auto ptx = ts::detail::compile_only(k.def(), opts, argv, arch).assembly;
    INFO(ptx);
    for (const char* want : {"ld.global.cg.v4.b32", "ld.global.ca.v4.b32", "ld.global.cv.v4.b32",
                             "ld.global.L1::evict_first.v4.b32", "ld.global.L1::evict_last.v4.b32", "ld.global.cg.b32",
                             "st.global.cs.v4.b32", "st.global.wt.v4.b32", "st.global.L1::evict_first.v4.b32",
                             "st.global.wb.v4.b32", "st.global.cg.v4.b32", "st.global.L1::evict_last.v4.b32"}) {
      INFO(want);
      CHECK(ptx.find(want) != std::string::npos);
    }
    if (ptxas.empty()) continue;
    ScratchFile file(ptx, ".ptx");
    const auto r = run_command(ptxas + " -arch=" + arch + " " + file.path() + " -o /dev/null");
    INFO(r.output);
    CHECK(r.exit_code == 0);
  }
}

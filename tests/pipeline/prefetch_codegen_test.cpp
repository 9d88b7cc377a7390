// A loop that prefetches in registers (the next block is loaded before this block's arithmetic and
// carried to the next iteration, as cross-entropy's forward does) keeps its prefetch in the PTX:
// the first block is loaded before the loop, each next one in the body (ptxas, warnings as errors).
// LLVM's InstCombine used to fold the two loads into one at the top of the body (lowering.cpp,
// open_carried), where each was waited for right after it was issued. The kernel is checked on the
// interpreter against a sum on the host, and its PTX assembled by ptxas.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend/tool_paths.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tessera.hpp"

namespace ts = tessera;
using namespace tessera::test;

namespace {

constexpr int kBlock = 1024;

// out[row] = sum(exp(x[row, :])) over rows of n (a multiple of kBlock), a block at a time, the
// next block loaded (unmasked: the last iteration loads the last block again) before this one's
// exp.
auto make_prefetching_row_sum() {
  return ts::kernel("prefetching_row_sum", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n) {
    auto row = x + ts::program_id(0) * n;
    auto cols = ts::arange(0, kBlock);
    auto next = ts::load(row + cols);
    auto acc = ts::zeros<float>({kBlock});
    ts::for_range(0, n, kBlock, [&](ts::Int start) {
      auto current = next;
      next = ts::load(row + ts::minimum(start + kBlock, n - kBlock) + cols);
      acc = acc + ts::exp(current);
    });
    ts::store(out + ts::program_id(0), ts::sum(acc, 0));
  });
}

// Where the loop's body sits in the PTX: from its label to its branch back (the first `bra` to a
// label defined before it, which is the loop's); {npos, npos} where there is none.
std::pair<std::size_t, std::size_t> loop_body(const std::string& ptx) {
  for (std::size_t label = ptx.find("$L__BB"); label != std::string::npos; label = ptx.find("$L__BB", label + 1)) {
    const std::size_t colon = ptx.find(':', label);
    if (colon == std::string::npos || ptx.find_first_of(" \t\n;", label) < colon) continue;  // a use, not a label
    const std::string name = ptx.substr(label, colon - label);
    const std::size_t end = std::min(ptx.find("bra.uni \t" + name + ";", colon), ptx.find("bra \t" + name + ";", colon));
    if (end != std::string::npos) return {colon, end};
  }
  return {std::string::npos, std::string::npos};
}

}  // namespace

TEST_CASE("a loop that prefetches in registers loads its first block before the loop and the next ones in it",
          "[pipeline][codegen][nvptx]") {
  auto k = make_prefetching_row_sum();
  const int rows = 3, n = 4 * kBlock;
  std::mt19937 rng(20261207);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  std::vector<float> x(static_cast<std::size_t>(rows) * n), out(rows);
  for (auto& v : x) v = d(rng);
  ts::LaunchOptions opts{.grid = {rows}, .num_warps = 4, .executor = ts::Executor::Interpreter};
  k[opts](x, out, n);
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int c = 0; c < n; ++c) sum += std::exp(double(x[static_cast<std::size_t>(r) * n + c]));
    CHECK(out[static_cast<std::size_t>(r)] == Approx(sum).epsilon(1e-5));
  }

  auto args = decltype(k)::arg_values(x, out, n);
  const std::vector<ts::ArgValue> argv(args.begin(), args.end());
  const std::string ptxas = ptxas_or_skip();
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    const std::string ptx = ts::detail::compile_only(k.def(), opts, argv, arch).data;
    INFO(ptx);
    const auto [begin, end] = loop_body(ptx);
    REQUIRE(end != std::string::npos);
    // The first block is loaded before the loop, the next ones inside it. Folded, the loop's
    // only load sat at its top and nothing was loaded before it.
    CHECK(ptx.find("ld.global") < begin);
    CHECK(ptx.find("ld.global", begin) < end);
    if (!ptxas.empty()) {
      const auto r = assemble_ptx(ptxas, ptx, arch);
      INFO(r.output);
      CHECK(r.exit_code == 0);
    }
  }
}

// Atomics through the whole pipeline: DSL kernels on the interpreter against plain C++ references,
// and compiled for sm_80 / sm_90a (assembled by ptxas where present) and gfx942. A tile smaller
// than its layout's CTA tile is held by several threads; each element must still be updated once:
// checked here on the layouts the compiler chose, and on the device by tests/gpu.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "atomics_kernels.hpp"
#include "backend/tool_paths.hpp"
#include "jit/analysis/layouts.hpp"
#include "jit/ir/parser.hpp"
#include "tessera/runtime.hpp"

namespace ts = tessera;
namespace ak = atomics_kernels;
using namespace tessera::test;

namespace {

constexpr std::uint32_t kSeed = 20261201;

ts::LaunchOptions opts(std::int64_t n, int block, int warps, ts::MetaValues extra = {}) {
  ts::MetaValues meta = {{"BLOCK", block}};
  for (auto& kv : extra) meta.push_back(kv);
  return {.grid = {ts::cdiv(n, std::int64_t{block})}, .meta = meta, .num_warps = warps,
          .executor = ts::Executor::Interpreter};
}

std::string ptxas_errors(const std::string& ptx, const std::string& arch) {
  const std::string ptxas = find_ptxas();
  if (ptxas.empty()) return "";
  ScratchFile file(ptx, ".ptx");
  const auto r = run_command(ptxas + " -arch=" + arch + " " + file.path() + " -o /dev/null");
  return r.exit_code == 0 ? std::string() : r.output;
}

std::size_t count(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return static_cast<std::size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

}  // namespace

TEST_CASE("histogram by atomic_add counts every lane once, returning the old counts", "[pipeline][atomics]") {
  auto k = ak::make_histogram();
  std::mt19937 rng(kSeed);
  INFO("seed " << kSeed);
  for (auto [n, block, warps] : {std::array{1000, 16, 4}, std::array{4096, 256, 4}, std::array{77, 32, 8}}) {
    INFO("n = " << n << ", block = " << block << ", warps = " << warps);
    std::uniform_int_distribution<std::int32_t> bin(0, 9);
    std::vector<std::int32_t> x(n), bins(10, 0), old(n, -1), expect_bins(10, 0), expect_old(n);
    for (auto& v : x) v = bin(rng);
    for (int i = 0; i < n; ++i) expect_old[i] = expect_bins[x[i]]++;  // programs, then lanes, in order
    k[opts(n, block, warps, {{"RETURN", 1}})](x, bins, old, n);
    CHECK(bins == expect_bins);
    CHECK(old == expect_old);
  }
}

TEST_CASE("atomic_max and atomic_min over tiles onto one address", "[pipeline][atomics]") {
  std::mt19937 rng(kSeed);
  auto ki = ak::make_max_min<std::int32_t>();
  std::vector<std::int32_t> xi(3000);
  for (auto& v : xi) v = static_cast<std::int32_t>(rng() % 200000) - 100000;
  std::vector<std::int32_t> oi{INT32_MIN, INT32_MAX};
  ki[opts(2999, 128, 4)](xi, oi, 2999);  // the last element is masked off
  CHECK(oi[0] == *std::max_element(xi.begin(), xi.end() - 1));
  CHECK(oi[1] == *std::min_element(xi.begin(), xi.end() - 1));

  auto kf = ak::make_max_min<float>();
  std::vector<float> xf(500);
  for (auto& v : xf) v = static_cast<float>(rng() % 10000) / 7.f - 700.f;
  xf[17] = NAN;  // fmax/fmin: ignored
  std::vector<float> of{-INFINITY, INFINITY};
  kf[opts(500, 64, 2)](xf, of, 500);
  float mx = -INFINITY, mn = INFINITY;
  for (float v : xf) mx = std::fmax(mx, v), mn = std::fmin(mn, v);
  CHECK(of[0] == mx);
  CHECK(of[1] == mn);
}

TEST_CASE("float atomic_add in f32, f64, f16 and bf16", "[pipeline][atomics]") {
  auto run = [](auto tag) {
    using T = decltype(tag);
    auto k = ak::make_float_sum<T>();
    std::vector<T> x(300), sum(4, T(0.f));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = T(static_cast<float>(i % 5));
    k[opts(299, 32, 4)](x, sum, 299);
    std::vector<float> expect(4, 0.f);
    for (int i = 0; i < 299; ++i) expect[i % 4] += static_cast<float>(i % 5);
    for (int j = 0; j < 4; ++j) CHECK(static_cast<float>(sum[j]) == expect[j]);
  };
  run(float{});
  run(double{});
  run(ts::half{});
  run(ts::bfloat16{});
}

TEST_CASE("atomic_cas claims each slot exactly once", "[pipeline][atomics]") {
  auto k = ak::make_claim();
  const int n = 200, block = 32, slots = 8;
  std::vector<std::int32_t> s(slots, 0), seen(n, -1);
  k[opts(n, block, 4, {{"SLOTS", slots}})](s, seen, n);
  // Program 0 runs first and claims every slot; its later lanes and every other program see 1.
  CHECK(s == std::vector<std::int32_t>(slots, 1));
  for (int i = 0; i < n; ++i) {
    INFO("lane " << i);
    CHECK(seen[i] == (i < slots ? 0 : 1));
  }
}

TEST_CASE("scalar atomics: tickets, or, and, xchg", "[pipeline][atomics]") {
  auto k = ak::make_ticket();
  const int programs = 40, block = 16;
  std::vector<std::int32_t> counter{5}, tickets(programs * block, -1);
  std::vector<std::uint32_t> flags{0, 0xff};
  std::vector<std::int64_t> last{-1};
  k[{.grid = {programs}, .meta = {{"BLOCK", block}}, .num_warps = 4, .executor = ts::Executor::Interpreter}](
      counter, tickets, flags, last);
  CHECK(counter[0] == 5 + programs);
  for (int p = 0; p < programs; ++p)
    for (int i = 0; i < block; ++i) CHECK(tickets[p * block + i] == 5 + p);
  CHECK(flags[0] == 0xffffffffu);
  CHECK(flags[1] == 0xfeu);
  CHECK(last[0] == 5 + programs - 1);
}

TEST_CASE("atomics compile for NVPTX with their ordering and scope, and for gfx942", "[pipeline][atomics][codegen]") {
  ptxas_or_skip();  // where ptxas is missing the case is marked skipped, and ptxas_errors() checks nothing
  std::vector<std::int32_t> x(1000), bins(10), old(1000);
  auto hist = ak::make_histogram();
  auto hist_args = decltype(hist)::arg_values(x, bins, old, 1000);
  auto ticket = ak::make_ticket();
  std::vector<std::int32_t> counter(1), tickets(64);
  std::vector<std::uint32_t> flags(2);
  std::vector<std::int64_t> last(1);
  auto ticket_args = decltype(ticket)::arg_values(counter, tickets, flags, last);
  auto fsum = ak::make_float_sum<ts::bfloat16>();
  std::vector<ts::bfloat16> xb(64), sb(4);
  auto fsum_args = decltype(fsum)::arg_values(xb, sb, 64);
  auto mm = ak::make_max_min<float>();
  std::vector<float> xf(64), of(2);
  auto mm_args = decltype(mm)::arg_values(xf, of, 64);
  auto claim = ak::make_claim();
  std::vector<std::int32_t> sl(8), seen(64);
  auto claim_args = decltype(claim)::arg_values(sl, seen, 64);

  for (const std::string arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    const auto h = ts::detail::compile_only(hist.def(), opts(1000, 16, 4, {{"RETURN", 1}}), hist_args, arch);
    INFO(h.assembly);
    // acq_rel: a release fence, the relaxed atom, an acquire fence (lower_atomics.cpp says why).
    CHECK(count(h.assembly, R"(atom\.[a-z_.]*add\.(u|s)32)") >= 1);
    CHECK(count(h.assembly, R"(fence\.(acq_rel|sc)\.gpu)") >= 2);
    CHECK(ptxas_errors(h.assembly, arch).empty());

    const auto t = ts::detail::compile_only(ticket.def(), opts(64, 16, 4), ticket_args, arch);
    INFO(t.assembly);
    CHECK(count(t.assembly, R"(atom\.[a-z_.]*or\.b32)") == 1);
    CHECK(count(t.assembly, R"(atom\.[a-z_.]*and\.b32)") == 1);
    CHECK(count(t.assembly, R"(fence\.(acq_rel|sc)\.sys)") >= 1);  // the acquire/sys one
    CHECK(count(t.assembly, R"(atom\.[a-z_.]*exch\.b64)") == 1);
    CHECK(ptxas_errors(t.assembly, arch).empty());

    const auto f = ts::detail::compile_only(fsum.def(), opts(64, 32, 4), fsum_args, arch);
    CHECK(ptxas_errors(f.assembly, arch).empty());
    if (arch == "sm_90a") CHECK(count(f.assembly, R"(atom\.[a-z_.]*add\.noftz\.bf16)") >= 1);
    const auto m = ts::detail::compile_only(mm.def(), opts(64, 32, 4), mm_args, arch);
    CHECK(ptxas_errors(m.assembly, arch).empty());
    const auto c = ts::detail::compile_only(claim.def(), opts(64, 32, 4, {{"SLOTS", 8}}), claim_args, arch);
    CHECK(count(c.assembly, R"(atom\.[a-z_.]*cas\.b32)") >= 1);
    CHECK(ptxas_errors(c.assembly, arch).empty());
  }
  const auto g = ts::detail::compile_only(hist.def(), opts(1000, 16, 4, {{"RETURN", 1}}), hist_args, "gfx942");
  CHECK(g.format == "hsaco");
  CHECK(count(g.assembly, R"(global_atomic_add)") >= 1);
  CHECK_NOTHROW(ts::detail::compile_only(ticket.def(), opts(64, 16, 4), ticket_args, "gfx942"));
  CHECK_NOTHROW(ts::detail::compile_only(fsum.def(), opts(64, 32, 4), fsum_args, "gfx942"));
  CHECK_NOTHROW(ts::detail::compile_only(mm.def(), opts(64, 32, 4), mm_args, "gfx942"));
  CHECK_NOTHROW(ts::detail::compile_only(claim.def(), opts(64, 32, 4, {{"SLOTS", 8}}), claim_args, "gfx942"));
}

TEST_CASE("a replicated atomic tile has exactly one owner thread per element", "[pipeline][atomics][layout]") {
  // The owner rule of jit/lower/lower_atomics.cpp applied to the layout the compiler chose for a
  // 16-element tile in 4 warps (CTA tile far larger than 16): every element is owned once.
  auto hist = ak::make_histogram();
  std::vector<std::int32_t> x(16), bins(10), old(16);
  auto args = decltype(hist)::arg_values(x, bins, old, 16);
  for (auto [block, warps, warp_size, target] :
       {std::tuple{16, 4, 32, "sm_90a"}, std::tuple{64, 8, 32, "sm_80"}, std::tuple{16, 4, 64, "gfx942"}}) {
    INFO("block " << block << ", warps " << warps << ", " << target);
    const auto a = ts::detail::compile_only(hist.def(), opts(block, block, warps, {{"RETURN", 1}}), args, target);
    auto m = tessera::ir::parse_module(a.ir, "artifact.tir");
    const tessera::ir::Op* atomic = nullptr;
    tessera::ir::walk(m->entry(), [&](tessera::ir::Op& op) {
      if (op.kind == tessera::ir::OpKind::AtomicRmw) atomic = &op;
    });
    REQUIRE(atomic != nullptr);
    const auto dist = tessera::analysis::distribute(atomic->operands[0]->type);
    REQUIRE(dist.cta_tile[0] > block);  // the case under test: replicated
    std::vector<int> owners(static_cast<std::size_t>(block), 0);
    for (int tid = 0; tid < warps * warp_size; ++tid) {
      const auto base = dist.base(0, tid, warp_size);
      if (base >= dist.shape[0]) continue;  // not the first copy: does not act
      for (std::int64_t j = 0; j < dist.num_slots(); ++j) ++owners[static_cast<std::size_t>((base + dist.offset(0, j)) % block)];
    }
    CHECK(owners == std::vector<int>(static_cast<std::size_t>(block), 1));
  }
}

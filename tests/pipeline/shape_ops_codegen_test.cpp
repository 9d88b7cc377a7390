// reshape, trans, permute, join and split through the whole pipeline: DSL kernels launched on the
// interpreter through the public launch path (passes and layouts applied) against plain C++, and
// compiled for sm_90a (assembled by ptxas where present) and gfx942.
#include <catch2/catch.hpp>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "backend/tool_paths.hpp"
#include "backends/hip/hsaco_link.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tessera.hpp"

namespace ts = tessera;
using namespace tessera::test;

namespace {

constexpr std::uint32_t kSeed = 20261204;

// out (C x R) = x^T for x (R x C), by BR x BC tiles; the mask (i1) is transposed with the data.
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

// Each block of A*B*C elements viewed as <A x B x C>, permuted to <C x A x B> and stored flat.
auto make_permute3() {
  return ts::kernel("permute3", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n) {
    const int A = ts::meta("A"), B = ts::meta("B"), C = ts::meta("C");
    auto offs = ts::program_id(0) * (A * B * C) + ts::arange(0, A * B * C);
    auto mask = offs < n;
    auto v = ts::load(x + offs, mask, 0.0f).reshape({A, B, C});
    ts::store(out + offs, ts::permute(v, {2, 0, 1}).reshape({A * B * C}), mask);
  });
}

// ab = a and b interleaved (join); lo/hi = the halves of the pairs in p (split).
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

// out = x[1], x[0]: split of a <2> into scalars, join of scalars.
auto make_scalar_pair() {
  return ts::kernel("scalar_pair", [](ts::Ptr<float> x, ts::Ptr<float> out) {
    auto two = ts::arange(0, 2);
    auto [first, second] = ts::split(ts::load(x + two));
    ts::store(out + two, ts::join(second, first));
  });
}

std::vector<float> random_floats(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-10.f, 10.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

ts::LaunchOptions interp(ts::Grid grid, ts::MetaValues meta, int warps) {
  return {.grid = grid, .meta = std::move(meta), .num_warps = warps, .executor = ts::Executor::Interpreter};
}

std::string ptxas_errors(const std::string& ptx, const std::string& arch) {
  const std::string ptxas = find_ptxas();
  if (ptxas.empty()) return "";
  ScratchFile file(ptx, ".ptx");
  const auto r = run_command(ptxas + " -arch=" + arch + " " + file.path() + " -o /dev/null");
  return r.exit_code == 0 ? std::string() : r.output;
}

}  // namespace

TEST_CASE("transpose through the pipeline on the interpreter", "[pipeline][shape]") {
  auto k = make_transpose<float>();
  std::mt19937 rng(kSeed);
  INFO("seed " << kSeed);
  for (auto [r, c, br, bc, warps] : {std::array{37, 70, 16, 32, 4}, std::array{1, 50, 1, 64, 2}, std::array{50, 1, 64, 1, 2},
                                     std::array{130, 64, 64, 64, 8}, std::array{8, 8, 8, 8, 1}}) {
    INFO(r << "x" << c << " by " << br << "x" << bc << ", " << warps << " warps");
    auto x = random_floats(static_cast<std::size_t>(r * c), rng);
    std::vector<float> out(x.size(), -1.f);
    k[interp({ts::cdiv(r, br), ts::cdiv(c, bc)}, {{"BR", br}, {"BC", bc}}, warps)](x, out, r, c);
    std::size_t wrong = 0;
    for (int i = 0; i < r; ++i)
      for (int j = 0; j < c; ++j) wrong += out[j * r + i] != x[i * c + j];
    CHECK(wrong == 0);
  }
}

TEST_CASE("reshape + permute, join and split through the pipeline on the interpreter", "[pipeline][shape]") {
  std::mt19937 rng(kSeed + 1);
  INFO("seed " << kSeed + 1);
  auto p3 = make_permute3();
  for (auto [a, b, c, n] : {std::array{2, 4, 8, 1000}, std::array{1, 16, 2, 64}, std::array{8, 1, 4, 33}}) {
    INFO(a << "x" << b << "x" << c << ", n = " << n);
    const int block = a * b * c;
    auto x = random_floats(static_cast<std::size_t>(n), rng);
    std::vector<float> out(x.size(), -1.f);
    p3[interp({ts::cdiv(n, block)}, {{"A", a}, {"B", b}, {"C", c}}, 4)](x, out, n);
    std::size_t wrong = 0;
    for (int i = 0; i < n; ++i) {
      // Result (k, i0, j) of the block is source (i0, j, k); masked-off sources read 0.
      const int base = i / block * block, q = i % block;
      const int k = q / (a * b), i0 = q / b % a, j = q % b;
      const int src = base + (i0 * b + j) * c + k;
      wrong += out[i] != (src < n ? x[src] : 0.f);
    }
    CHECK(wrong == 0);
  }

  auto js = make_join_split();
  for (auto [n, block, warps] : {std::array{77, 32, 4}, std::array{1, 16, 1}, std::array{1024, 256, 8}}) {
    INFO("join/split n = " << n << ", block = " << block);
    auto a = random_floats(n, rng), b = random_floats(n, rng), p = random_floats(2 * n, rng);
    std::vector<float> ab(2 * n, -1.f), lo(n, -1.f), hi(n, -1.f);
    js[interp({ts::cdiv(n, block)}, {{"BLOCK", block}}, warps)](a, b, p, ab, lo, hi, n);
    std::size_t wrong = 0;
    for (int i = 0; i < n; ++i)
      wrong += (ab[2 * i] != a[i]) + (ab[2 * i + 1] != b[i]) + (lo[i] != p[2 * i]) + (hi[i] != p[2 * i + 1]);
    CHECK(wrong == 0);
  }

  auto sp = make_scalar_pair();
  std::vector<float> x{3.f, 4.f}, out(2);
  sp[interp({1}, {}, 1)](x, out);
  CHECK(out == std::vector<float>{4.f, 3.f});
}

TEST_CASE("shape ops compile for sm_90a and gfx942", "[pipeline][shape][codegen]") {
  ptxas_or_skip();  // where ptxas is missing the case is marked skipped, and ptxas_errors() checks nothing
  const bool have_lld = !ts::backend::find_lld().empty();
  if (!have_lld) skip("no ld.lld to link gfx942 code (set TESSERA_LLD)");
  std::vector<float> f(4096);
  std::vector<ts::half> h(4096);
  auto tf = make_transpose<float>();
  auto th = make_transpose<ts::half>();
  auto p3 = make_permute3();
  auto js = make_join_split();
  auto sp = make_scalar_pair();
  struct Case {
    const char* label;
    ts::detail::KernelDef* def;
    ts::LaunchOptions opts;
    std::vector<ts::ArgValue> args;
  };
  auto args = [](const auto& a) { return std::vector<ts::ArgValue>(a.begin(), a.end()); };
  const std::vector<Case> cases{
      {"transpose f32 16x32", &tf.def(), interp({3, 3}, {{"BR", 16}, {"BC", 32}}, 4), args(decltype(tf)::arg_values(f, f, 37, 70))},
      {"transpose f32 64x64", &tf.def(), interp({1, 1}, {{"BR", 64}, {"BC", 64}}, 8), args(decltype(tf)::arg_values(f, f, 64, 64))},
      {"transpose f16 1x64", &th.def(), interp({1, 1}, {{"BR", 1}, {"BC", 64}}, 2), args(decltype(th)::arg_values(h, h, 1, 64))},
      {"permute3", &p3.def(), interp({16}, {{"A", 2}, {"B", 4}, {"C", 8}}, 4), args(decltype(p3)::arg_values(f, f, 1000))},
      {"join_split", &js.def(), interp({4}, {{"BLOCK", 256}}, 8), args(decltype(js)::arg_values(f, f, f, f, f, f, 1000))},
      {"scalar_pair", &sp.def(), interp({1}, {}, 1), args(decltype(sp)::arg_values(f, f))},
  };
  for (const Case& c : cases) {
    INFO(c.label);
    const auto ptx = ts::detail::compile_only(*c.def, c.opts, c.args, "sm_90a");
    INFO(ptx.assembly);
    CHECK(ptx.format == "ptx");
    CHECK(ptx.assembly.find("bar.sync") != std::string::npos);  // through shared memory, with barriers
    CHECK(ptx.assembly.find(".shared") != std::string::npos);
    CHECK(ptxas_errors(ptx.assembly, "sm_90a").empty());
    if (have_lld) {
      const auto amd = ts::detail::compile_only(*c.def, c.opts, c.args, "gfx942");
      CHECK(amd.format == "hsaco");
      // One wave of 64 is the whole workgroup: LLVM drops its barriers, rightly.
      if (c.opts.num_warps > 1) CHECK(amd.assembly.find("s_barrier") != std::string::npos);
    }
  }
}

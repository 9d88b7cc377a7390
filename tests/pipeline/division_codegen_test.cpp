// Float arithmetic in the PTX. Division on NVIDIA: `/` on f32 is div.full.f32 (within 2 ulp, as Triton's `/`), while ts::div_rn
// and ts::fdiv(..., ieee_rounding = true) are the correctly rounded div.rn.f32, as Triton's
// tl.div_rn; assembled by ptxas where present. (Their values: tests/conformance, on every executor.)
// Contraction: with CompileOptions::fp_fusion (the default, as Triton's enable_fp_fusion) a*b+c is
// one fma.rn.f32; without it mul.rn and add.rn, which ptxas may not fuse either.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend/tool_paths.hpp"
#include "codegen_util.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tessera.hpp"

namespace ts = tessera;
using namespace tessera::test;

namespace {

// The PTX of `k` (one program of one warp) for sm_80 and sm_90a: each handed to `check`, then
// assembled by ptxas where one is found (no spills, no warnings).
template <class Kernel, class Check>
void check_nvptx(Kernel& k, const std::vector<ts::ArgValue>& values, Check check) {
  const std::string ptxas = ptxas_or_skip();
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    const auto art = ts::detail::compile_only(k.def(), {.grid = {1}, .num_warps = 1}, values, arch);
    INFO(art.data);
    check(art.data);
    if (!ptxas.empty()) check_ptxas_accepts_without_spills(ptxas, art.data, arch);
  }
}

}  // namespace

TEST_CASE("f32 `/` is div.full, div_rn and fdiv(ieee_rounding) are div.rn", "[pipeline][codegen][nvptx]") {
  auto k = ts::kernel("divisions", [](ts::Ptr<float> a, ts::Ptr<float> b, ts::Ptr<float> q, ts::Ptr<float> rn,
                                      ts::Ptr<float> ieee, ts::Ptr<float> plain) {
    auto offs = ts::arange(0, 128);
    auto x = ts::load(a + offs), y = ts::load(b + offs);
    ts::store(q + offs, x / y);
    ts::store(rn + offs, ts::div_rn(x, y));
    ts::store(ieee + offs, ts::fdiv(x, y, true));
    ts::store(plain + offs, ts::fdiv(x, y));
  });
  std::vector<float> a(128, 1.0f), b(128, 3.0f), q(128), rn(128), ieee(128), plain(128);
  const auto args = decltype(k)::arg_values(a, b, q, rn, ieee, plain);
  const std::vector<ts::ArgValue> values(args.begin(), args.end());
  check_nvptx(k, values, [](const std::string& ptx) {
    // `/` and fdiv(x, y) are one op after CSE, as are div_rn and fdiv(x, y, true): 4 elements per
    // thread of each kind.
    CHECK(count(ptx, "div.full.f32") == 4);
    CHECK(count(ptx, "div.rn.f32") == 4);
  });
}

TEST_CASE("fp_fusion contracts a*b+c to fma, and without it every mul and add rounds on its own",
          "[pipeline][codegen][nvptx]") {
  auto k = ts::kernel("axpy_fusion", [](ts::Ptr<float> a, ts::Ptr<float> b, ts::Ptr<float> c, ts::Ptr<float> out) {
    auto offs = ts::arange(0, 128);
    ts::store(out + offs, ts::load(a + offs) * ts::load(b + offs) + ts::load(c + offs));
  });
  std::vector<float> a(128, 1.0f), b(128, 3.0f), c(128, 2.0f), out(128);
  const auto args = decltype(k)::arg_values(a, b, c, out);
  const std::vector<ts::ArgValue> values(args.begin(), args.end());
  ts::LaunchOptions opts{.grid = {1}, .num_warps = 1};
  const auto fused = ts::detail::compile_only(k.def(), opts, values, "sm_90a");
  INFO(fused.data);
  CHECK(count(fused.data, "fma.rn.f32") == 4);
  CHECK(count(fused.data, "mul.rn.f32") == 0);
  opts.compile.fp_fusion = false;
  const auto separate = ts::detail::compile_only(k.def(), opts, values, "sm_90a");
  INFO(separate.data);
  CHECK(count(separate.data, "fma.rn.f32") == 0);
  CHECK(count(separate.data, "mul.rn.f32") == 4);
  CHECK(count(separate.data, "add.rn.f32") == 4);
}

TEST_CASE("fast_dividef is div.approx.ftz.f32 and fast_expf and fast_exp2f ex2.approx.ftz.f32, elsewhere they compute /, exp and exp2",
          "[pipeline][codegen][nvptx]") {
  auto k = ts::kernel("fast_math", [](ts::Ptr<float> a, ts::Ptr<float> b, ts::Ptr<float> q, ts::Ptr<float> e,
                                      ts::Ptr<float> e2) {
    auto offs = ts::arange(0, 128);
    auto x = ts::load(a + offs), y = ts::load(b + offs);
    ts::store(q + offs, ts::fast_dividef(x, y));
    ts::store(e + offs, ts::fast_expf(x) + ts::exp(y));     // one of each exp: both forms in one kernel
    ts::store(e2 + offs, ts::fast_exp2f(x) + ts::exp2(y));  // and of each exp2
  });
  std::vector<float> a(128), b(128), q(128), e(128), e2(128);
  for (int i = 0; i < 128; ++i) {
    a[i] = -20.0f + 0.3125f * static_cast<float>(i);
    b[i] = 0.75f + 0.5f * static_cast<float>(i % 7);
  }
  const auto args = decltype(k)::arg_values(a, b, q, e, e2);
  const std::vector<ts::ArgValue> values(args.begin(), args.end());
  check_nvptx(k, values, [](const std::string& ptx) {
    CHECK(count(ptx, "div.approx.ftz.f32") == 4);
    CHECK(count(ptx, "div.approx.f32") == 0);  // its subnormal scaling: three SASS instructions more
    CHECK(count(ptx, "div.full.f32") == 0);
    CHECK(count(ptx, "ex2.approx.ftz.f32") == 8);
    CHECK(count(ptx, "ex2.approx.f32") == 8);  // ts::exp and ts::exp2 keep their subnormal handling
  });
  // AMD: a division LLVM may turn into a reciprocal and a product.
  const auto amd = ts::detail::compile_only(k.def(), {.grid = {1}, .num_warps = 1}, values, "gfx942");
  CHECK(count(amd.assembly, "v_rcp_f32") > 0);
  // The interpreter divides exactly and flushes nothing (the host targets: host_math_test.cpp).
  k[{.grid = {1}, .num_warps = 1, .executor = ts::Executor::Interpreter}](a, b, q, e, e2);
  for (int i = 0; i < 128; ++i) {
    INFO(i);
    CHECK(q[i] == a[i] / b[i]);
    CHECK(e[i] == Approx(std::exp(a[i]) + std::exp(b[i])).epsilon(1e-6));
    CHECK(e2[i] == Approx(std::exp2(a[i]) + std::exp2(b[i])).epsilon(1e-6));
  }
}

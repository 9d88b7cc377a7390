// fp8 in generated code: a kernel that loads, computes on, converts (to nearest and toward zero, from
// f32 and f64) and multiplies (dot) fp8 tiles compiles for sm_80, sm_90a and gfx942, and ptxas
// accepts the PTX. (The values are checked by the conformance suite: tests/conformance/fp8_test.cpp
// on the interpreter, the host targets and the GPU.)
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "backend/tool_paths.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tessera.hpp"

namespace ts = tessera;
using namespace tessera::test;

namespace {
template <class F>
std::string fp8_kernel_code(const std::string& arch) {
  auto k = ts::kernel("fp8_mix", [](ts::Ptr<F> a, ts::Ptr<F> b, ts::Ptr<float> x, ts::Ptr<double> y, ts::Ptr<F> out,
                                    ts::Ptr<float> mm) {
    auto r = ts::arange(0, 32);
    auto offs = r.col() * 32 + r.row();
    auto p = ts::load(a + offs), q = ts::load(b + offs);
    auto s = p * q + p / q - ts::maximum(p, q);
    auto from_f32 = ts::load(x + offs).template to<F>(ts::Rounding::rtz);
    auto from_f64 = ts::load(y + offs).template to<F>();
    ts::store(out + offs, ts::where(s < from_f32, s, from_f64));
    ts::store(mm + offs, ts::dot(p, q));
  });
  std::vector<F> a(1024), b(1024), out(1024);
  std::vector<float> x(1024), mm(1024);
  std::vector<double> y(1024);
  auto args = decltype(k)::arg_values(a, b, x, y, out, mm);
  const std::vector<ts::ArgValue> argv(args.begin(), args.end());
  return ts::detail::compile_only(k.def(), {.grid = {1}, .num_warps = 4}, argv, arch).assembly;
}
}  // namespace

TEMPLATE_TEST_CASE("fp8 arithmetic, conversions and dot compile for NVIDIA and AMD, and ptxas accepts them",
                   "[pipeline][fp8]", ts::float8_e4m3, ts::float8_e5m2) {
  const std::string ptxas = ptxas_or_skip();
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    const std::string ptx = fp8_kernel_code<TestType>(arch);
    CHECK(ptx.find("mma") != std::string::npos);  // the dot runs on tensor cores (f16 operands)
    if (ptxas.empty()) continue;
    const auto r = assemble_ptx(ptxas, ptx, arch);
    INFO(r.output);
    CHECK(r.exit_code == 0);
  }
  CHECK_FALSE(fp8_kernel_code<TestType>("gfx942").empty());
}

// ts::inline_asm_elementwise in generated code: the assembly reaches the PTX once per `pack`
// elements, registers packed as ops.def says, and ptxas accepts it for sm_80 and sm_90a; AMDGCN
// assembly compiles for gfx942; pure assembly is merged like any pure op, assembly with effects
// never; misuse is a ProgramError naming the user's line; the interpreter refuses such a kernel.
// (Values: tests/gpu/inline_asm_gpu_test.cpp on the H200; the host targets' refusal:
// tests/host/host_language_test.cpp.)
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "backend/tool_paths.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tessera.hpp"
#include "tests/common/inline_asm_kernels.hpp"

namespace ts = tessera;
using namespace tessera::test;
namespace kernels = tessera::test::inline_asm_kernels;

namespace {

template <class K, class... Args>
std::string code_of(K&& k, const std::string& arch, const Args&... args) {
  auto values = std::remove_cvref_t<K>::arg_values(args...);
  const std::vector<ts::ArgValue> argv(values.begin(), values.end());
  return ts::detail::compile_only(k.def(), {.grid = {1}, .meta = {{"BLOCK", 256}}, .num_warps = 4}, argv, arch).assembly;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("inline_asm_elementwise reaches the PTX, packed as ops.def says, and ptxas accepts it", "[pipeline][inline_asm][nvptx]") {
  const std::string ptxas = ptxas_or_skip();
  std::vector<std::int32_t> x(256), shift(256);
  std::vector<float> a(256), b(256), prod(256);
  std::vector<std::uint8_t> bytes(256), out(256);
  std::vector<std::int64_t> v(256);
  std::vector<std::int32_t> lo(256), hi(256);
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    // One instance per register slot of a thread (per `pack` slots). The assembly keeps our spacing
    // ("shl.b32 %r"), where LLVM's own instructions have a tab after the opcode.
    const std::string scalar = code_of(kernels::make_scalar_ops(), arch, x, a, b, shift, prod, 256);
    const std::size_t slots = count(scalar, "mul.rn.f32 %");
    CHECK(slots >= 1);
    CHECK(count(scalar, "shl.b32 %") == slots);
    const std::string packed = code_of(kernels::make_packed_bytes(), arch, bytes, out, 256);
    CHECK(count(packed, "and.b32 %") >= 1);
    CHECK(count(packed, "and.b32 %") == count(packed, "0x1F1F1F1F"));  // four bytes in one register
    const std::string two = code_of(kernels::make_two_results(), arch, v, lo, hi, 256);
    CHECK(count(two, "mov.b64 {%r") >= 1);
    if (ptxas.empty()) continue;
    for (const std::string* ptx : {&scalar, &packed, &two}) {
      const auto r = assemble_ptx(ptxas, *ptx, arch);
      INFO(r.output);
      CHECK(r.exit_code == 0);
    }
  }
}

namespace {
auto make_twice() {
  return ts::kernel("asm_twice", [](ts::Ptr<std::int32_t> x, ts::Ptr<std::int32_t> y) {
    auto offs = ts::arange(0, 128);
    auto v = ts::load(x + offs);
    const bool is_pure = ts::meta("PURE") != 0;
    auto a = ts::inline_asm_elementwise<std::int32_t>("xor.b32 $0, $1, 0x5A5A;", "=r,r", v, is_pure);
    auto b = ts::inline_asm_elementwise<std::int32_t>("xor.b32 $0, $1, 0x5A5A;", "=r,r", v, is_pure);
    ts::store(y + offs, a + b);
  });
}
}  // namespace

TEST_CASE("pure inline assembly merges like any pure op, assembly with effects is kept twice", "[pipeline][inline_asm]") {
  std::vector<std::int32_t> x(128), y(128);
  auto k = make_twice();
  auto values = decltype(k)::arg_values(x, y);
  const std::vector<ts::ArgValue> argv(values.begin(), values.end());
  auto instances = [&](int pure) {
    const std::string ptx =
        ts::detail::compile_only(k.def(), {.grid = {1}, .meta = {{"PURE", pure}}, .num_warps = 4}, argv, "sm_90a").assembly;
    return count(ptx, "0x5A5A");
  };
  const std::size_t merged = instances(1);
  CHECK(merged >= 1);
  CHECK(instances(0) == 2 * merged);
}

TEST_CASE("AMDGCN inline assembly compiles for gfx942", "[pipeline][inline_asm][amdgpu]") {
  auto k = ts::kernel("asm_amd", [](ts::Ptr<std::int32_t> x, ts::Ptr<std::int32_t> y) {
    auto offs = ts::arange(0, 256);
    ts::store(y + offs, ts::inline_asm_elementwise<std::int32_t>("v_lshlrev_b32 $0, 3, $1", "=v,v", ts::load(x + offs)));
  });
  std::vector<std::int32_t> x(256), y(256);
  CHECK(count(code_of(k, "gfx942", x, y), "v_lshlrev_b32") >= 1);
}

TEST_CASE("inline_asm_elementwise misuse is a ProgramError at the user line and the interpreter refuses it", "[pipeline][inline_asm][errors]") {
  std::vector<std::int32_t> x(128), y(128);
  auto wrong_count = ts::kernel("asm_wrong_count", [](ts::Ptr<std::int32_t> x, ts::Ptr<std::int32_t> y) {
    auto offs = ts::arange(0, 128);
    ts::store(y + offs, ts::inline_asm_elementwise<std::int32_t>("add.s32 $0, $1, $1;", "=r,r,r", ts::load(x + offs)));
  });
  REQUIRE_THROWS_WITH(code_of(wrong_count, "sm_90a", x, y),
                      Catch::Contains("constraints \"=r,r,r\" name 3 registers; 1 results and 1 arguments at pack 1 need 2") &&
                          Catch::Contains("inline_asm_test.cpp"));
  auto bad_pack = ts::kernel("asm_bad_pack", [](ts::Ptr<std::int32_t> x, ts::Ptr<std::int32_t> y) {
    auto offs = ts::arange(0, 128);
    ts::store(y + offs, ts::inline_asm_elementwise<std::int32_t>("mov.b32 $0, $1;", "=r,r", ts::load(x + offs), true, 3));
  });
  REQUIRE_THROWS_WITH(code_of(bad_pack, "sm_90a", x, y), Catch::Contains("pack must be a power of two from 1 to 16, got 3") &&
                                                              Catch::Contains("inline_asm_test.cpp"));
  auto kernel = kernels::make_packed_bytes();
  auto in = ts::Buffer<std::uint8_t>::from_host(std::vector<std::uint8_t>(64, 1), ts::Executor::Interpreter);
  ts::Buffer<std::uint8_t> out(64, ts::Executor::Interpreter);
  auto launch = [&] { kernel[{.grid = {1}, .meta = {{"BLOCK", 64}}, .executor = ts::Executor::Interpreter}](in, out, 64); };
  REQUIRE_THROWS_AS(launch(), ts::ProgramError);
  REQUIRE_THROWS_WITH(launch(), Catch::Contains("the interpreter cannot run GPU assembly") &&
                                    Catch::Contains("inline_asm_kernels.hpp"));
}

// device_assert and debug mode in generated code: with CompileOptions::debug, NVIDIA's PTX reports a
// failed check through vprintf and __assertfail, and ptxas accepts it for sm_80 and sm_90a; without
// it the asserts leave no trace in the code; an AMD target refuses a check in debug mode, naming the
// line. (What a failure reports is checked on the interpreter and the host targets, tests/host, and
// on the GPU, tests/gpu.)
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "backend/tool_paths.hpp"
#include "tests/common/language_reference.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tessera.hpp"

namespace ts = tessera;
using namespace tessera::test;

namespace {
std::string checker_ptx(bool debug, const std::string& arch) {
  auto k = language_reference::make_checker();
  std::vector<std::int32_t> x(256), out(256);
  auto args = decltype(k)::arg_values(x, out, 1000, 3);
  const std::vector<ts::ArgValue> argv(args.begin(), args.end());
  const ts::LaunchOptions opts{.grid = {2}, .num_warps = 4, .compile = {.debug = debug}};
  return ts::detail::compile_only(k.def(), opts, argv, arch).assembly;
}
}  // namespace

TEST_CASE("debug mode compiles asserts and overflow checks into __assertfail calls that ptxas accepts", "[pipeline][assert][nvptx]") {
  const std::string ptxas = ptxas_or_skip();
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    const std::string ptx = checker_ptx(true, arch);
    INFO(ptx);
    CHECK(ptx.find("__assertfail") != std::string::npos);
    CHECK(ptx.find("vprintf") != std::string::npos);
    CHECK(ptx.find(as_ptx_bytes("i32 overflow in mul")) != std::string::npos);  // the check of x * scale
    CHECK(ptx.find(as_ptx_bytes("x below the limit")) != std::string::npos);
    if (ptxas.empty()) continue;
    const auto r = assemble_ptx(ptxas, ptx, arch);
    INFO(r.output);
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("outside debug mode asserts cost nothing: the code is the code without them", "[pipeline][assert][nvptx]") {
  auto plain = ts::kernel("checker", [](ts::Ptr<std::int32_t> x, ts::Ptr<std::int32_t> out, ts::Int limit, ts::Int scale) {
    auto p = ts::program_id(0);
    auto r = ts::arange(0, 16), c = ts::arange(0, 8);
    auto offs = p * 128 + r.col() * 8 + c.row();
    ts::store(out + offs, ts::load(x + offs) * scale);
  });
  std::vector<std::int32_t> x(256), out(256);
  auto args = decltype(plain)::arg_values(x, out, 1000, 3);
  const std::vector<ts::ArgValue> argv(args.begin(), args.end());
  const std::string want = ts::detail::compile_only(plain.def(), {.grid = {2}, .num_warps = 4}, argv, "sm_90a").assembly;
  const std::string got = checker_ptx(false, "sm_90a");
  CHECK(got.find("__assertfail") == std::string::npos);
  CHECK(got == want);
}

TEST_CASE("a check in debug mode on an AMD target is an error naming the line", "[pipeline][assert]") {
  auto k = language_reference::make_checker();
  std::vector<std::int32_t> x(256), out(256);
  auto args = decltype(k)::arg_values(x, out, 1000, 3);
  const std::vector<ts::ArgValue> argv(args.begin(), args.end());
  const ts::LaunchOptions debug{.grid = {2}, .num_warps = 4, .compile = {.debug = true}};
  REQUIRE_THROWS_WITH(ts::detail::compile_only(k.def(), debug, argv, "gfx942"),
                      Catch::Contains("a check at ") && Catch::Contains("language_reference.hpp:") &&
                          Catch::Contains("gfx942") && Catch::Contains("compile without debug mode"));
  CHECK_NOTHROW(ts::detail::compile_only(k.def(), {.grid = {2}, .num_warps = 4}, argv, "gfx942"));
}

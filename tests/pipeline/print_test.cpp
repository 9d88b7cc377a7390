// device_print in generated code: NVIDIA's PTX calls vprintf and ptxas accepts it for sm_80 and
// sm_90a; an AMD target refuses the op with an error naming the user's line. (What it prints is
// checked on the interpreter and the host targets, tests/host, and on the GPU, tests/gpu.)
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "backend/tool_paths.hpp"
#include "tests/common/language_reference.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tessera.hpp"

namespace ts = tessera;
using namespace tessera::test;

TEST_CASE("device_print becomes vprintf calls that ptxas accepts", "[pipeline][print][nvptx]") {
  const std::string ptxas = ptxas_or_skip();
  auto k = language_reference::make_printer();
  std::vector<std::int32_t> x(64);
  std::vector<float> y(32);
  auto args = decltype(k)::arg_values(x, y);
  const std::vector<ts::ArgValue> argv(args.begin(), args.end());
  const ts::LaunchOptions opts{.grid = {2}, .num_warps = 4};
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    const auto ptx = ts::detail::compile_only(k.def(), opts, argv, arch).assembly;
    INFO(ptx);
    CHECK(ptx.find("call.uni") != std::string::npos);
    CHECK(ptx.find("vprintf") != std::string::npos);
    CHECK(ptx.find(as_ptx_bytes(" y=%%d: (operand 1) %d\n")) != std::string::npos);  // the bool operand's format ("%" doubled)
    if (ptxas.empty()) continue;
    const auto r = assemble_ptx(ptxas, ptx, arch);
    INFO(r.output);
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("device_print on an AMD target is an error naming the line", "[pipeline][print]") {
  const int line = __LINE__ + 1;
  auto k = ts::kernel("print_amd", [](ts::Ptr<float> p) { ts::device_print("v", ts::load(p)); });
  std::vector<float> buf(1);
  auto args = decltype(k)::arg_values(buf);
  const std::vector<ts::ArgValue> argv(args.begin(), args.end());
  REQUIRE_THROWS_WITH(ts::detail::compile_only(k.def(), {.grid = {1}}, argv, "gfx942"),
                      Catch::Contains("device_print at") && Catch::Contains("print_test.cpp:" + std::to_string(line)) &&
                          Catch::Contains("gfx942"));
}

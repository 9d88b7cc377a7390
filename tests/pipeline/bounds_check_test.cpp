// Debug mode's bounds checks in generated code (lower_bounds.cpp): with CompileOptions::debug,
// NVIDIA kernels take one hidden extent parameter per pointer argument and check each global
// load, store and atomic against it, also through a loop-carried pointer; ptxas accepts the code
// for sm_80 and sm_90a. Without debug mode nothing of it is there. (What a failure reports on the
// GPU: tests/gpu/bounds_gpu_test.cpp.)
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "backend/tool_paths.hpp"
#include "tests/common/bounds_kernels.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tessera.hpp"

namespace ts = tessera;
using namespace tessera::test;

namespace {
template <class K, class... A>
std::string ptx_of(K& k, bool debug, const std::string& arch, A&&... a) {
  auto args = K::arg_values(a...);
  const std::vector<ts::ArgValue> argv(args.begin(), args.end());
  const ts::LaunchOptions opts{.grid = {3}, .num_warps = 4, .compile = {.debug = debug}};
  return ts::detail::compile_only(k.def(), opts, argv, arch).assembly;
}
bool has(const std::string& ptx, const std::string& text) { return ptx.find(text) != std::string::npos; }
}  // namespace

TEST_CASE("debug mode checks global accesses against hidden extent parameters, and ptxas accepts it", "[pipeline][bounds][nvptx]") {
  const std::string ptxas = ptxas_or_skip();
  auto probe = bounds_kernels::make_probe();
  auto rows = bounds_kernels::make_row_walker();
  std::vector<float> x(384), out(384), total(1);
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    const std::string p = ptx_of(probe, true, arch, x, out, 384, 384);
    const std::string r = ptx_of(rows, true, arch, x, out, total, 5);
    INFO(p);
    INFO(r);
    // Four parameters, two of them pointers: two extents after them.
    CHECK(has(p, "bounds_probe_param_5"));
    CHECK_FALSE(has(p, "bounds_probe_param_6"));
    CHECK(has(p, as_ptx_bytes(" load out of bounds of argument 'arg0' (byte offset %lld, extent %llu) at ")));
    CHECK(has(p, as_ptx_bytes(" store out of bounds of argument 'arg1'")));
    CHECK(has(p, "__assertfail"));
    CHECK(has(p, "trap;"));
    // A load through a pointer carried by the loop, and an atomic: both checked.
    CHECK(has(r, "bounds_rows_param_6"));
    CHECK(has(r, as_ptx_bytes(" load out of bounds of argument 'arg0'")));
    CHECK(has(r, as_ptx_bytes(" atomic out of bounds of argument 'arg2'")));
    CHECK(has(r, as_ptx_bytes(" store out of bounds of argument 'arg1'")));
    if (ptxas.empty()) continue;
    for (const std::string* ptx : {&p, &r}) {
      const auto a = assemble_ptx(ptxas, *ptx, arch);
      INFO(a.output);
      CHECK(a.exit_code == 0);
    }
  }
}

TEST_CASE("outside debug mode kernels take no extents and check nothing", "[pipeline][bounds][nvptx]") {
  auto probe = bounds_kernels::make_probe();
  std::vector<float> x(384), out(384);
  const std::string p = ptx_of(probe, false, "sm_90a", x, out, 384, 384);
  CHECK(has(p, "bounds_probe_param_3"));
  CHECK_FALSE(has(p, "bounds_probe_param_4"));
  CHECK_FALSE(has(p, "__assertfail"));
  CHECK_FALSE(has(p, as_ptx_bytes("out of bounds")));
}

// Runtime hardening: kernel names that are not PTX identifiers become valid symbols (ptxas accepts
// them), an empty name is a ProgramError; TESSERA_* flags mean what they say; only tessera::Error
// leaves an entry point.
#include <catch2/catch.hpp>
#include <string>
#include <vector>
#include <tessera/tessera.hpp>

#include "backends/cuda/ptxas.hpp"
#include "jit/lower/codegen.hpp"
#include "jit/runtime/env_flag.hpp"
#include "scoped_env.hpp"
#include "tests/skip.hpp"

namespace ts = tessera;
using tessera_test::ScopedEnv;

TEST_CASE("kernel symbols: valid identifiers kept, everything else mangled", "[names]") {
  using tessera::lower::kernel_symbol;
  CHECK(kernel_symbol("add") == "add");
  CHECK(kernel_symbol("_private_1") == "_private_1");
  CHECK(kernel_symbol("norm.fwd") == "norm_fwd");
  CHECK(kernel_symbol("9lives") == "_9lives");
  CHECK(kernel_symbol("my kernel") == "my_kernel");
  CHECK(kernel_symbol("ns::f<float>") == "ns__f_float_");
  CHECK(kernel_symbol("caf\xc3\xa9") == "caf__");
  const std::string long_name(1000, 'k');
  const std::string sym = kernel_symbol(long_name);
  CHECK(sym.size() == 257);
  CHECK(sym.rfind(std::string(240, 'k') + "_", 0) == 0);
}

TEST_CASE("kernels with such names compile for sm_90a and gfx942, and ptxas accepts the PTX", "[names]") {
  const std::string ptxas = tessera::backend::find_ptxas();
  if (ptxas.empty()) tessera::test::skip("no ptxas (or TESSERA_PTXAS=0): the PTX is not assembled");
  for (const std::string& name : std::vector<std::string>{"norm.fwd", "9lives", "my kernel", "ns::f<float>", "caf\xc3\xa9", "a$b", std::string(400, 'k')}) {
    INFO("name '" << name << "'");
    auto k = ts::kernel(name, [](ts::Ptr<float> out) { ts::store(out + ts::arange(0, 32), 3.0f); });
    const ts::LaunchOptions opts{.grid = {1}, .num_warps = 1};
    auto ptx = k.warmup("sm_90a", opts, reinterpret_cast<float*>(256));
    CHECK_THAT(ptx.assembly, Catch::Contains(".entry " + tessera::lower::kernel_symbol(name)));
    CHECK_NOTHROW(k.warmup("gfx942", opts, reinterpret_cast<float*>(256)));
    if (!ptxas.empty()) CHECK_NOTHROW(tessera::backend::run_ptxas(ptxas, ptx.data, "sm_90a", 3, 0, false));
    // On the interpreter the name is only a name.
    std::vector<float> out(32);
    k[{.grid = {1}, .num_warps = 1, .executor = ts::Executor::Interpreter}](out);
    CHECK(out == std::vector<float>(32, 3.0f));
  }
}

TEST_CASE("an empty kernel name is a ProgramError naming the definition's line", "[names]") {
  const int line = __LINE__ + 1;
  auto k = ts::kernel("", [](ts::Ptr<float> out) { ts::store(out, 1.0f); });
  std::vector<float> out(1);
  CHECK_THROWS_AS((k[{.grid = {1}, .executor = ts::Executor::Interpreter}](out)), ts::ProgramError);
  CHECK_THROWS_WITH((k[{.grid = {1}, .executor = ts::Executor::Interpreter}](out)),
                    Catch::Contains("hardening_test.cpp:" + std::to_string(line)) && Catch::Contains("needs a name"));
}

TEST_CASE("TESSERA_* flags: true/false/yes/no/on/off/1/0 in any case, anything else warned and unset", "[env]") {
  using tessera::runtime::env_flag;
  using tessera::runtime::parse_flag;
  for (const char* on : {"1", "true", "TRUE", "Yes", "on"}) CHECK(parse_flag(on) == true);
  for (const char* off : {"0", "false", "False", "no", "OFF"}) CHECK(parse_flag(off) == false);
  for (const char* bad : {"2", "enable", "tru", " 1"}) CHECK_FALSE(parse_flag(bad).has_value());
  {
    ScopedEnv env("TESSERA_TEST_FLAG", "false");
    CHECK_FALSE(env_flag("TESSERA_TEST_FLAG", true));
  }
  {
    ScopedEnv env("TESSERA_TEST_FLAG", "maybe");
    CHECK(env_flag("TESSERA_TEST_FLAG", true));
    CHECK_FALSE(env_flag("TESSERA_TEST_FLAG", false));
  }
  {
    ScopedEnv env("TESSERA_TEST_FLAG", "");
    CHECK(env_flag("TESSERA_TEST_FLAG", true));
  }
}

TEST_CASE("a zero-length ts::Buffer is bound-checked, not taken for a raw pointer", "[memory]") {
  auto k = ts::kernel("fill", [](ts::Ptr<float> out, ts::Int n) {
    auto offs = ts::arange(0, 16);
    ts::store(out + offs, 1.0f, offs < n);
  });
  ts::Buffer<float> empty(0, ts::Executor::Interpreter);
  const ts::LaunchOptions opts{.grid = {1}, .executor = ts::Executor::Interpreter};
  CHECK_NOTHROW(k[opts](empty, 0));  // every lane masked off: nothing touched
  CHECK_THROWS_AS(k[opts](empty, 1), ts::MemoryAccessError);
  CHECK_THROWS_WITH(k[opts](empty, 16), Catch::Contains("(0 bytes)"));
  // An empty vector has no memory at all (a null data()): refused before the launch.
  std::vector<float> none;
  CHECK_THROWS_AS(k[opts](none, 3), ts::LaunchError);
}

TEST_CASE("sizes that overflow and allocations that fail are tessera::Errors", "[memory]") {
  CHECK_THROWS_AS(ts::Buffer<float>(SIZE_MAX / 2, ts::Executor::Interpreter), ts::Error);
  CHECK_THROWS_WITH(ts::Buffer<float>(SIZE_MAX / 2, ts::Executor::Interpreter), Catch::Contains("does not fit"));
  CHECK_THROWS_AS(ts::Buffer<char>(SIZE_MAX - 10, ts::Executor::Interpreter), ts::Error);
  CHECK_THROWS_WITH(ts::Buffer<char>(std::size_t{1} << 62, ts::Executor::Interpreter),
                    Catch::Contains("out of host memory"));
}

TEST_CASE("a std::bad_alloc during a launch leaves it as a tessera::Error naming the kernel", "[memory]") {
  // Memory can run out anywhere while tracing or compiling; the user's own code is one such place.
  auto k = ts::kernel("greedy", [](ts::Ptr<float> out) {
    if (ts::meta("FAIL") != 0) throw std::bad_alloc();
    ts::store(out, 1.0f);
  });
  std::vector<float> out(1);
  const ts::LaunchOptions opts{.grid = {1}, .meta = {{"FAIL", 1}}, .executor = ts::Executor::Interpreter};
  CHECK_THROWS_AS(k[opts](out), ts::Error);
  CHECK_THROWS_WITH(k[opts](out), Catch::Contains("kernel 'greedy': out of host memory during a launch"));
  CHECK_THROWS_WITH(k.warmup(opts, out), Catch::Contains("out of host memory during a warmup"));
  CHECK_THROWS_WITH(k.warmup("sm_90a", opts, out), Catch::Contains("out of host memory during a compile"));
}

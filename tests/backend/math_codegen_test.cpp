// Every math op compiles for sm_80 and sm_90a (with libdevice and with TESSERA_LIBDEVICE=0;
// PTX assembled by ptxas where present) and for gfx942; f64 without libdevice is a clear error.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include "jit/ir/parser.hpp"
#include "jit/lower/codegen.hpp"
#include "jit/transforms/assign_layouts.hpp"
#include "nvptx_test_util.hpp"
#include "tessera/error.hpp"

namespace {

// out[i] = op(x[i] [, y[i] [, z[i]]]) over 256 elements of `dtype`.
std::unique_ptr<tessera::ir::Module> math_kernel(const std::string& op, int arity, const std::string& dtype) {
  std::string t = "<256x" + dtype + ">", p = "<256xptr<" + dtype + ">>";
  std::string text = "kernel @m(%x: ptr<" + dtype + ">, %out: ptr<" + dtype + ">) num_warps = 4 {\n"
                     "  %0 = arange {end = 256, start = 0} : <256xi32>\n"
                     "  %1 = splat %x : " + p + "\n  %2 = addptr %1, %0 : " + p + "\n"
                     "  %3 = load %2 : " + t + "\n";
  std::string args = "%3";
  for (int i = 1; i < arity; ++i) args += ", %3";
  text += "  %4 = " + op + " " + args + " : " + t + "\n"
          "  %5 = splat %out : " + p + "\n  %6 = addptr %5, %0 : " + p + "\n"
          "  store %6, %4\n  return\n}\n";
  auto m = tessera::ir::parse_module(text, "math_codegen_test");
  return m;
}

struct EnvGuard {  // sets TESSERA_LIBDEVICE for one scope
  explicit EnvGuard(const char* v) { ::setenv("TESSERA_LIBDEVICE", v, 1); }
  ~EnvGuard() { ::unsetenv("TESSERA_LIBDEVICE"); }
};

const std::pair<const char*, int> kOps[] = {{"exp", 1}, {"log", 1}, {"exp2", 1}, {"log2", 1}, {"rsqrt", 1},
                                            {"sin", 1}, {"cos", 1}, {"tanh", 1}, {"sigmoid", 1}, {"erf", 1},
                                            {"floor", 1}, {"ceil", 1}, {"sqrt", 1}, {"pow", 2}, {"fma", 3}, {"rem", 2}};

bool have_libdevice() {
  const char* home = std::getenv("CUDA_HOME");
  for (std::string p : {std::string(home ? home : "/nonexistent") + "/nvvm/libdevice/libdevice.10.bc",
                        std::string("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc")})
    if (tessera::test::is_executable_file(p) || std::ifstream(p).good()) return true;
  return false;
}

std::string compile(const std::string& op, int arity, const std::string& dtype, const std::string& target) {
  auto m = math_kernel(op, arity, dtype);
  tessera::transforms::assign_layouts(*m, tessera::analysis::target_info(target));
  return tessera::lower::compile_to_device(*m, target).assembly;
}

}  // namespace

TEST_CASE("math ops compile to PTX with and without libdevice", "[backend][nvptx][math]") {
  const bool libdevice = have_libdevice();
  if (!libdevice) WARN("libdevice not found: only tessera's own math is compiled");
  for (const char* mode : {"own", "libdevice"}) {
    if (std::string(mode) == "libdevice" && !libdevice) continue;
    EnvGuard env(std::string(mode) == "own" ? "0" : "");
    if (std::string(mode) == "libdevice") ::unsetenv("TESSERA_LIBDEVICE");
    for (const char* arch : {"sm_80", "sm_90a"})
      for (const char* dtype : {"f32", "f16", "bf16", "f64"})
        for (auto [op, arity] : kOps) {
          INFO(mode << " " << arch << " " << op << " " << dtype);
          const bool f64_needs_lib = std::string(dtype) == "f64" && std::string(mode) == "own" &&
                                     std::string("floor ceil fma sqrt rsqrt rem").find(op) == std::string::npos;
          if (f64_needs_lib) {
            CHECK_THROWS_AS(compile(op, arity, dtype, arch), tessera::ProgramError);
            continue;
          }
          const std::string ptx = compile(op, arity, dtype, arch);
          // libdevice's f64 sin/cos/pow keep their slow-path reduction as an internal .func; any
          // call must target a function defined in the module (ptxas rejects an undefined one).
          if (tessera::test::contains(ptx, R"(\bcall\b)")) CHECK(tessera::test::contains(ptx, R"(\.func\b)"));
          tessera::test::check_ptxas_accepts(ptx, arch);
        }
  }
}

TEST_CASE("exp and log on f32 stay ex2.approx / lg2.approx with libdevice", "[backend][nvptx][math]") {
  const std::string ptx = compile("exp", 1, "f32", "sm_90a");
  CHECK(tessera::test::contains(ptx, R"(ex2\.approx\.f32\s)"));
  CHECK(tessera::test::contains(compile("log2", 1, "f32", "sm_80"), R"(lg2\.approx\.f32\s)"));
}

TEST_CASE("float % is the exact long division, not frem's x - trunc(x/y)*y, without libdevice", "[backend][nvptx][math]") {
  EnvGuard env("0");
  for (const std::string dtype : {"f32", "f64"}) {
    // x % y of two loads (math_kernel's x % x would fold away).
    const std::string t = "<256x" + dtype + ">", p = "<256xptr<" + dtype + ">>";
    auto m = tessera::ir::parse_module(
        "kernel @m(%x: ptr<" + dtype + ">, %y: ptr<" + dtype + ">, %out: ptr<" + dtype + ">) num_warps = 4 {\n"
        "  %0 = arange {end = 256, start = 0} : <256xi32>\n"
        "  %1 = splat %x : " + p + "\n  %2 = addptr %1, %0 : " + p + "\n  %3 = load %2 : " + t + "\n"
        "  %4 = splat %y : " + p + "\n  %5 = addptr %4, %0 : " + p + "\n  %6 = load %5 : " + t + "\n"
        "  %7 = rem %3, %6 : " + t + "\n"
        "  %8 = splat %out : " + p + "\n  %9 = addptr %8, %0 : " + p + "\n  store %9, %7\n  return\n}\n",
        "math_codegen_test");
    tessera::transforms::assign_layouts(*m, tessera::analysis::target_info("sm_90a"));
    const std::string ptx = tessera::lower::compile_to_device(*m, "sm_90a").assembly;
    INFO(dtype);
    CHECK_FALSE(tessera::test::contains(ptx, R"(cvt\.rzi)"));
    CHECK_FALSE(tessera::test::contains(ptx, R"(\bdiv\.)"));
    CHECK(tessera::test::contains(ptx, R"(\bclz\.b(32|64)\b)"));  // the significands' normalization
    tessera::test::check_ptxas_accepts(ptx, "sm_90a");
  }
}

TEST_CASE("math ops compile for gfx942", "[backend][amdgpu][math]") {
  for (const char* dtype : {"f32", "f16", "bf16"})
    for (auto [op, arity] : kOps) {
      INFO(op << " " << dtype);
      CHECK_FALSE(compile(op, arity, dtype, "gfx942").empty());
    }
  for (const char* op : {"floor", "ceil", "sqrt", "rsqrt"}) CHECK_FALSE(compile(op, 1, "f64", "gfx942").empty());
  CHECK_FALSE(compile("rem", 2, "f64", "gfx942").empty());
  CHECK_FALSE(compile("fma", 3, "f64", "gfx942").empty());
  CHECK_THROWS_AS(compile("tanh", 1, "f64", "gfx942"), tessera::ProgramError);
}

// Every example kernel compiled for real targets without a GPU: PTX for sm_80 and sm_90a assembled
// by ptxas, HSACO for gfx90a and gfx942 read back with llvm-readelf. Skipped, with a warning, where
// the tool is absent. Also pins that the memory accesses of vector add are vectorized exactly when
// the specialization facts allow it.
#include <catch2/catch.hpp>

#include <random>
#include <regex>
#include <string>
#include <vector>

#include "backend/tool_paths.hpp"
#include "backends/hip/hsaco_link.hpp"
#include "examples_util.hpp"
#include "tessera/runtime.hpp"

namespace ts = tessera;
using namespace tessera::test;

namespace {

// Each example kernel on two sizes: one where every integer is divisible by 16 (and the buffers,
// from operator new, are 16-byte aligned), and one where none is; each compiles its own
// specialization.
std::vector<HostCase> codegen_cases(std::mt19937& rng) {
  std::vector<HostCase> cases;
  cases.push_back(vector_add_case(98432, rng));  // the example's size, divisible by 16
  cases.push_back(vector_add_case(1001, rng));
  cases.push_back(fused_elu_case(4096, 1.5f, -0.25f, rng));
  cases.push_back(fused_elu_case(100003, 1.5f, -0.25f, rng));  // the example's size
  cases.push_back(broadcast_2d_case(64, 128, 128, rng));
  cases.push_back(broadcast_2d_case(1000, 300, 303, rng));  // the example's shape
  return cases;
}

ts::detail::Artifact compile(HostCase& c, const std::string& target) {
  return ts::detail::compile_only(*c.def, c.opts, c.args, target);
}

// ptxas's verdict on `ptx` for `arch`; empty when it accepted it.
std::string ptxas_errors(const std::string& ptxas, const std::string& ptx, const std::string& arch) {
  ScratchFile file(ptx, ".ptx");
  const auto r = run_command(ptxas + " -arch=" + arch + " " + file.path() + " -o /dev/null");
  return r.exit_code == 0 ? std::string() : "ptxas failed (" + std::to_string(r.exit_code) + "):\n" + r.output;
}

// The global memory instructions of `ptx` with a vector width, e.g. "ld.global.v4.f32".
std::vector<std::string> vector_accesses(const std::string& ptx, const char* op) {
  std::vector<std::string> found;
  const std::regex re(std::string(op) + R"(\.global(\.[a-z]+)*\.v[248]\.[a-z0-9]+)");
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), re); it != std::sregex_iterator(); ++it)
    found.push_back(it->str());
  return found;
}

}  // namespace

TEST_CASE("every example kernel compiles to PTX that ptxas accepts", "[pipeline][codegen][nvptx][examples]") {
  const std::string ptxas = ptxas_or_skip();
  std::mt19937 rng(kExamplesSeed);
  for (HostCase& c : codegen_cases(rng))
    for (const char* arch : {"sm_80", "sm_90a"}) {
      INFO(c.label << ", " << arch);
      const auto art = compile(c, arch);
      CHECK(art.format == "ptx");
      CHECK(art.data.find(".entry " + c.def->name) != std::string::npos);
      CHECK(art.data.find(std::string(".target ") + arch) != std::string::npos);
      if (ptxas.empty()) continue;
      const std::string errors = ptxas_errors(ptxas, art.data, arch);
      INFO(art.data << "\n" << errors);
      CHECK(errors.empty());
    }
}

TEST_CASE("every example kernel compiles to an HSACO that llvm-readelf reads back",
          "[pipeline][codegen][amdgpu][examples]") {
  std::string searched;
  if (ts::backend::find_lld(&searched).empty()) {
    skip("no ld.lld to link the HSACOs (looked at " + searched + "); set TESSERA_LLD");
    return;
  }
  const std::string readelf = readelf_or_skip();
  std::mt19937 rng(kExamplesSeed);
  for (HostCase& c : codegen_cases(rng))
    for (const char* arch : {"gfx90a", "gfx942"}) {
      INFO(c.label << ", " << arch);
      const auto art = compile(c, arch);
      CHECK(art.format == "hsaco");
      REQUIRE(art.data.size() > 4);
      CHECK(art.data.compare(0, 4, "\x7f" "ELF") == 0);
      if (readelf.empty()) continue;
      ScratchFile hsaco(art.data, ".hsaco");
      const auto r = run_command(readelf + " -h -s " + hsaco.path());
      INFO("llvm-readelf said:\n" << r.output);
      REQUIRE(r.exit_code == 0);
      CHECK(r.output.find("DYN (Shared object file)") != std::string::npos);
      CHECK(r.output.find("EM_AMDGPU") != std::string::npos);
      CHECK(r.output.find(arch) != std::string::npos);
      CHECK(r.output.find(" " + c.def->name + "\n") != std::string::npos);
      CHECK(r.output.find(" " + c.def->name + ".kd\n") != std::string::npos);
    }
}

TEST_CASE("vector add loads 16 bytes at a time when n is divisible by 16 and the pointers aligned",
          "[pipeline][codegen][nvptx][examples]") {
  std::mt19937 rng(kExamplesSeed);
  HostCase c = vector_add_case(1 << 14, rng);
  for (const ts::ArgValue& a : c.args)
    if (a.kind == ts::ArgValue::Kind::Pointer) REQUIRE(reinterpret_cast<std::uintptr_t>(a.p) % 16 == 0);
  const std::string ptxas = ptxas_or_skip();
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    const auto art = compile(c, arch);
    INFO(art.data);
    CHECK(art.data.find("ld.global.v4") != std::string::npos);
    CHECK(!vector_accesses(art.data, "st").empty());
    if (!ptxas.empty()) CHECK(ptxas_errors(ptxas, art.data, arch).empty());
  }
}

TEST_CASE("vector add with n = 1001 masks element by element, assembles, and is correct on the interpreter",
          "[pipeline][codegen][nvptx][examples]") {
  // n = 1001 proves nothing about the mask: no run of lanes is known to share it, so a vector
  // access could touch a masked lane. Only element-wise accesses are allowed.
  std::mt19937 rng(kExamplesSeed);
  HostCase c = vector_add_case(1001, rng);
  const std::string ptxas = ptxas_or_skip();
  for (const char* arch : {"sm_80", "sm_90a"}) {
    INFO(arch);
    const auto art = compile(c, arch);
    INFO(art.data);
    const auto loads = vector_accesses(art.data, "ld"), stores = vector_accesses(art.data, "st");
    CHECK(loads.empty());
    CHECK(stores.empty());
    if (!ptxas.empty()) CHECK(ptxas_errors(ptxas, art.data, arch).empty());
  }

  // The same kernel and specialization on the interpreter, through the public launch path.
  auto add = ex::make_vector_add();
  const std::int32_t n = 1001;
  const auto hx = random_values<float>(n, rng, -1.f, 1.f), hy = random_values<float>(n, rng, -1.f, 1.f);
  auto x = ts::Buffer<float>::from_host(hx, ts::Executor::Interpreter);
  auto y = ts::Buffer<float>::from_host(hy, ts::Executor::Interpreter);
  auto out = ts::Buffer<float>::from_host(poisoned<float>(n), ts::Executor::Interpreter);
  add[ex::vector_add_options(n, ts::Executor::Interpreter)](x, y, out, n);
  const auto got = out.to_host();
  std::vector<float> want(n);
  ex::vector_add_reference(hx, hy, want);
  for (std::int32_t i = 0; i < n; ++i) {
    INFO("i = " << i << ", seed " << kExamplesSeed);
    REQUIRE(same_bits(got[i], want[i]));
  }
}

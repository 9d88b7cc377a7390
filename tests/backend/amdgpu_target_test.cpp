// Tier 4 for AMD without a GPU: the HSACO from the AMDGPU target is read back with llvm-readelf.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>

#include "backends/hip/hsaco_link.hpp"
#include "test_kernel.hpp"
#include "tessera/error.hpp"
#include "scoped_env.hpp"
#include "tool_paths.hpp"

using tessera_test::ScopedEnv;

TEST_CASE("amdgpu targets describe themselves", "[backend][amdgpu]") {
  for (const char* arch : {"gfx90a", "gfx942"}) {
    auto t = tessera::lower::make_target(arch);
    CHECK(t->name() == arch);
    CHECK(t->triple() == "amdgcn-amd-amdhsa");
    CHECK(t->warp_size() == 64);
    CHECK(t->global_address_space() == 1);
    CHECK(t->shared_address_space() == 3);
    CHECK(t->data_layout().find("e-") == 0);
  }
}

TEST_CASE("amdgpu compiles a kernel to an HSACO that llvm-readelf reads back", "[backend][amdgpu]") {
  std::string searched;
  if (tessera::backend::find_lld(&searched).empty()) {
    tessera::test::skip("no ld.lld to link the HSACO (looked at " + searched + "); set TESSERA_LLD");
    return;
  }
  const std::string readelf = tessera::test::readelf_or_skip();
  for (const char* arch : {"gfx90a", "gfx942"}) {
    INFO("arch " << arch);
    auto target = tessera::lower::make_target(arch);
    llvm::LLVMContext ctx;
    const tessera::lower::DeviceBinary bin =
        target->compile(tessera::test::build_add_one(ctx, *target, "add_one", 256), "add_one");
    CHECK(bin.format == "hsaco");
    CHECK(bin.kernel_name == "add_one");
    REQUIRE(bin.data.size() > 4);
    CHECK(bin.data.compare(0, 4, "\x7f" "ELF") == 0);
    CHECK(bin.assembly.find(".amdhsa_kernel add_one") != std::string::npos);
    CHECK(bin.assembly.find("s_barrier") != std::string::npos);
    CHECK(bin.assembly.find(std::string(".amdgcn_target \"amdgcn-amd-amdhsa--") + arch) != std::string::npos);

    if (readelf.empty()) continue;
    tessera::test::ScratchFile hsaco(bin.data, ".hsaco");
    const auto r = tessera::test::run_command(readelf + " -h -s " + hsaco.path());
    INFO("llvm-readelf said:\n" << r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(r.output.find("DYN (Shared object file)") != std::string::npos);
    CHECK(r.output.find("EM_AMDGPU") != std::string::npos);
    CHECK(r.output.find(arch) != std::string::npos);
    CHECK(r.output.find(" add_one\n") != std::string::npos);
    CHECK(r.output.find(" add_one.kd\n") != std::string::npos);
  }
}

TEST_CASE("a TESSERA_LLD that is not an executable is reported by name", "[backend][amdgpu]") {
  ScopedEnv env("TESSERA_LLD", "/nonexistent/ld.lld");
  try {
    tessera::backend::link_hsaco("not an object");
    FAIL("no exception");
  } catch (const tessera::Error& e) {
    CHECK(std::string(e.what()).find("TESSERA_LLD=/nonexistent/ld.lld") != std::string::npos);
  }
}

TEST_CASE("ld.lld's own complaint reaches the error message", "[backend][amdgpu]") {
  if (tessera::backend::find_lld().empty()) {
    tessera::test::skip("no ld.lld; set TESSERA_LLD");
    return;
  }
  try {
    tessera::backend::link_hsaco("not an object");
    FAIL("no exception");
  } catch (const tessera::Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("failed to link the HSACO") != std::string::npos);
    CHECK(msg.find("error:") != std::string::npos);  // lld's own diagnostic follows ours
  }
}

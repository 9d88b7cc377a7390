// The ptxas runner (backends/cuda/ptxas.hpp): how it is found, and, where CUDA's ptxas is
// installed, that it assembles a kernel's PTX into a cubin with the -v resource log the
// resource report reads.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include "backends/cuda/ptxas.hpp"
#include "scoped_env.hpp"
#include "tests/skip.hpp"

namespace ts = tessera;
using tessera_test::ScopedEnv;

TEST_CASE("TESSERA_PTXAS selects, disables or rejects the assembler", "[ptxas]") {
  {
    ScopedEnv env("TESSERA_PTXAS", "0");
    CHECK(tessera::backend::find_ptxas().empty());
  }
  {
    ScopedEnv env("TESSERA_PTXAS", "/nonexistent/ptxas");
    CHECK_THROWS_WITH(tessera::backend::find_ptxas(), Catch::Contains("TESSERA_PTXAS=/nonexistent/ptxas is not an executable"));
  }
}

TEST_CASE("ptxas assembles a kernel into a cubin with a resource log", "[ptxas]") {
  const std::string ptxas = tessera::backend::find_ptxas();
  if (ptxas.empty()) {
    tessera::test::skip("no ptxas installed (or TESSERA_PTXAS=0): the runner is exercised where CUDA's ptxas is");
    return;
  }
  auto k = ts::kernel("ptxas_probe", [](ts::Ptr<float> x, ts::Ptr<float> y, ts::Int n) {
    auto offs = ts::program_id(0) * 256 + ts::arange(0, 256);
    ts::store(y + offs, ts::load(x + offs, offs < n) * 2.0f, offs < n);
  });
  const ts::LaunchOptions opts{.grid = {1}, .num_warps = 4};
  auto a = k.warmup("sm_90a", opts, reinterpret_cast<float*>(256), reinterpret_cast<float*>(512), 1000);
  auto r = tessera::backend::run_ptxas(ptxas, a.data, "sm_90a", 3, 0, false);
  CHECK(r.cubin.substr(1, 3) == "ELF");
  CHECK_THAT(r.log, Catch::Contains("registers"));
  CHECK_THAT(r.log, Catch::Contains("bytes spill stores"));
  CHECK_THROWS_WITH(tessera::backend::run_ptxas(ptxas, "not ptx", "sm_90a", 3, 0, false), Catch::Contains("failed to assemble"));
}

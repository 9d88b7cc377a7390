// Executor::Host without the host executor library (this test program links libtessera.so only):
// a clear tessera::Error that says what to link, and the kernel stays usable on the interpreter.
#include "launch_test_util.hpp"

using namespace launch_test;
using Catch::Contains;

TEST_CASE("Executor::Host without libtessera_host is an Error that says to link tessera::host", "[api][executor]") {
  auto k = make_scale("host_kernel");
  std::vector<float> x(100, 2.f), out(100);
  for (ts::Executor e : {ts::Executor::Host, ts::Executor::Host64}) {
    auto o = scale_options(100);
    o.executor = e;
    try {
      k[o](x, out, 100, 3.f);
      FAIL("a host launch ran without the host executor");
    } catch (const ts::Error& err) {
      CHECK_THAT(std::string(err.what()), Contains("tessera::host") && Contains("libtessera_host"));
    }
  }
  auto o = scale_options(100);
  o.executor = ts::Executor::Interpreter;
  k[o](x, out, 100, 3.f);
  CHECK(out == std::vector<float>(100, 6.f));
}

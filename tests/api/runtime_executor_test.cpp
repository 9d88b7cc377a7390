// Executors on a machine without a GPU: Auto resolves to the interpreter and says why; asking for
// CUDA explicitly is a DriverError carrying the driver's reason, and leaves the kernel usable.
#include <cstdlib>
#include <string>

#include "launch_test_util.hpp"

using namespace launch_test;
using Catch::Contains;

namespace {
bool interpret_forced() {
  const char* v = std::getenv("TESSERA_INTERPRET");
  return v && *v && std::string(v) != "0";
}
}  // namespace

TEST_CASE("default_executor names the interpreter and the reason", "[api][runtime][executor]") {
  const auto choice = ts::default_executor();
  if (choice.executor == ts::Executor::Cuda || choice.executor == ts::Executor::Hip) {
    WARN("a GPU is present (" << choice.description << "): the no-GPU checks do not apply");
    return;
  }
  CHECK(choice.executor == ts::Executor::Interpreter);
  CHECK_THAT(choice.description, Contains("interpreter"));
  if (interpret_forced()) {
    CHECK_THAT(choice.description, Contains("TESSERA_INTERPRET=1"));
  } else {
    CHECK_THAT(choice.description, Contains("no GPU") && Contains("no NVIDIA driver") &&
                                       Contains("libcuda.so.1 not found") && Contains("libamdhip64"));
  }
  CHECK(ts::detail::resolve(ts::Executor::Auto) == ts::Executor::Interpreter);
}

TEST_CASE("asking for CUDA without an NVIDIA driver is a DriverError", "[api][runtime][executor]") {
  if (ts::default_executor().executor == ts::Executor::Cuda) {
    WARN("CUDA is available here: nothing to refuse");
    return;
  }
  auto k = make_scale("cuda_kernel");
  ts::Buffer<float> x(100, ts::Executor::Interpreter), out(100, ts::Executor::Interpreter);
  auto o = scale_options(100);
  o.executor = ts::Executor::Cuda;
  const auto c0 = ts::runtime_stats().compiles;
  // Raw pointers, which say nothing of their place: the executor itself is refused (a Buffer of
  // the interpreter would be refused before, as memory CUDA cannot reach).
  const std::string msg = error_of<ts::DriverError>([&] { k[o](x.data(), out.data(), 100, 2.0f); });
  CHECK_THAT(msg, Contains("cannot use CUDA"));
  // Which reason depends on the machine: this one has no libcuda.so.1 at all.
  if (!interpret_forced()) CHECK_THAT(msg, Contains("no NVIDIA driver") && Contains("libcuda.so.1 not found"));
  CHECK(ts::runtime_stats().compiles == c0);
  // Device memory for CUDA is refused the same way.
  CHECK_THROWS_AS(ts::Buffer<float>(16, ts::Executor::Cuda), ts::DriverError);
  CHECK_THROWS_AS(ts::synchronize(ts::Executor::Cuda), ts::DriverError);
  // The kernel still runs on the interpreter.
  CHECK(scale_works(k));
}

TEST_CASE("asking for HIP without an AMD runtime is a DriverError", "[api][runtime][executor]") {
  if (ts::default_executor().executor == ts::Executor::Hip) {
    WARN("HIP is available here: nothing to refuse");
    return;
  }
  auto k = make_scale("hip_kernel");
  ts::Buffer<float> x(100, ts::Executor::Interpreter), out(100, ts::Executor::Interpreter);
  auto o = scale_options(100);
  o.executor = ts::Executor::Hip;
  const auto c0 = ts::runtime_stats().compiles;
  // HIP is refused only when the compiled kernel is loaded: the compile must not be counted, nor
  // the failed entry cached, and the compile lock must be released for the next launch.
  CHECK_THAT(error_of<ts::DriverError>([&] { k[o](x.data(), out.data(), 100, 2.0f); }), Contains("cannot use HIP"));
  CHECK_THAT(error_of<ts::DriverError>([&] { k[o](x.data(), out.data(), 100, 2.0f); }), Contains("cannot use HIP"));
  CHECK(ts::runtime_stats().compiles == c0);
  CHECK(scale_works(k));
}

TEST_CASE("Executor::Auto runs on the interpreter here", "[api][runtime][executor]") {
  if (ts::default_executor().executor != ts::Executor::Interpreter) return;
  auto k = make_scale("auto_kernel");
  const auto host = iota_floats(70);
  auto x = ts::Buffer<float>::from_host(host);  // Auto: host memory
  CHECK(x.executor() == ts::Executor::Interpreter);
  ts::Buffer<float> out(70);
  k[{.grid = {2}, .meta = {{"BLOCK", 64}}}](x, out, 70, -1.0f);
  const auto got = out.to_host();
  for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == -host[i]);
}

TEST_CASE("target_name names what a launch on each executor compiles for", "[api][runtime][executor]") {
  CHECK(ts::target_name(ts::Executor::Interpreter) == "interpreter");
  CHECK(ts::target_name(ts::Executor::Host) == "host");
  CHECK(ts::target_name(ts::Executor::Host64) == "host64");
  if (ts::default_executor().executor != ts::Executor::Interpreter) return;
  CHECK(ts::target_name() == "interpreter");  // Auto resolves as a launch does
  // CUDA's target is the device's architecture: without a driver there is none to name.
  if (!interpret_forced()) CHECK_THROWS_AS(ts::target_name(ts::Executor::Cuda), ts::DriverError);
}

// What the host targets report instead of crashing, and how they are selected: an access outside
// the launch's buffers is a MemoryAccessError that names the kernel's source line and the buffer
// (as the interpreter's does), the launch after it runs normally, ts::Buffer on Executor::Host is
// host memory, and TESSERA_EXECUTOR picks the executor of Executor::Auto (hidden cases that ctest
// runs in processes of their own, since the environment is read once).
#include <cstdlib>
#include <string>

#include "host_test_util.hpp"

using namespace host_test;

namespace {

// Reads x[offs + shift] without a mask: past the end of x for the last `shift` elements.
auto make_overrun() {
  return ts::kernel("overrun", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int shift) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    ts::store(out + offs, ts::load(x + offs + shift));
  });
}

std::string message_of(ts::Executor e, std::int32_t shift) {
  auto k = make_overrun();
  std::vector<float> x(256, 1.f), out(256);
  try {
    k[{.grid = {2}, .meta = {{"BLOCK", 128}}, .num_warps = 2, .executor = e}](x, out, shift);
  } catch (const ts::MemoryAccessError& err) {
    return err.what();
  }
  return "";
}

}  // namespace

TEST_CASE("an out-of-bounds load on the host targets is a MemoryAccessError naming the line and the buffer",
          "[host][errors]") {
  enable_host();
  const std::string interp = message_of(ts::Executor::Interpreter, 3);
  REQUIRE_FALSE(interp.empty());
  for (ts::Executor e : {ts::Executor::Host, ts::Executor::Host64}) {
    const std::string msg = message_of(e, 3);
    INFO(executor_name(e) << ": " << msg << "\ninterpreter: " << interp);
    CHECK(msg.find("out-of-bounds load") != std::string::npos);
    CHECK(msg.find("host_errors_test.cpp:20") != std::string::npos);  // the load's line
    CHECK(msg.find("argument 'arg0'") != std::string::npos);  // named as the interpreter names it
    CHECK(interp.find("argument 'arg0'") != std::string::npos);
    CHECK(msg.find("(1024 bytes)") != std::string::npos);
    CHECK(msg.find("kernel 'overrun'") != std::string::npos);
    // In bounds, the same kernel runs, and its result is right.
    auto k = make_overrun();
    std::vector<float> x(256), out(256, -1.f);
    for (int i = 0; i < 256; ++i) x[i] = static_cast<float>(i);
    k[{.grid = {2}, .meta = {{"BLOCK", 128}}, .num_warps = 2, .executor = e}](x, out, 0);
    CHECK(out == x);
  }
}

TEST_CASE("a store before a buffer on the host target names the distance before its start", "[host][errors]") {
  enable_host();
  auto k = ts::kernel("underrun", [](ts::Ptr<std::int32_t> out, ts::Int shift) {
    auto offs = ts::arange(0, 64);
    ts::store(out + offs - shift, offs);
  });
  std::vector<std::int32_t> out(64);
  try {
    k[{.grid = {1}, .num_warps = 1, .executor = ts::Executor::Host}](out, 2);
    FAIL("no MemoryAccessError");
  } catch (const ts::MemoryAccessError& err) {
    const std::string msg = err.what();
    INFO(msg);
    CHECK(msg.find("out-of-bounds store") != std::string::npos);
    CHECK(msg.find("8 bytes before its start") != std::string::npos);
    CHECK(msg.find("argument 'arg0'") != std::string::npos);
  }
}

TEST_CASE("ts::Buffer on Executor::Host is host memory that host launches use", "[host][errors]") {
  enable_host();
  auto k = ts::kernel("twice", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n) {
    auto offs = ts::program_id(0) * 256 + ts::arange(0, 256);
    ts::store(out + offs, ts::load(x + offs, offs < n) * 2.0f, offs < n);
  });
  const std::vector<float> hx = {1, 2, 3, 4, 5};
  auto x = ts::Buffer<float>::from_host(hx, ts::Executor::Host);
  ts::Buffer<float> out(hx.size(), ts::Executor::Host);
  CHECK(out.executor() == ts::Executor::Host);
  k[{.grid = {1}, .num_warps = 1, .executor = ts::Executor::Host}](x, out, 5);
  ts::synchronize(ts::Executor::Host);
  CHECK(out.to_host() == std::vector<float>{2, 4, 6, 8, 10});
}

// Run by ctest with TESSERA_EXECUTOR=host64 (tests/CMakeLists.txt).
TEST_CASE("TESSERA_EXECUTOR=host64 makes Executor::Auto the host target with warps of 64", "[.][env_host64]") {
  enable_host();
  REQUIRE(std::getenv("TESSERA_EXECUTOR") != nullptr);
  CHECK(ts::default_executor().executor == ts::Executor::Host64);
  CHECK(ts::detail::resolve(ts::Executor::Auto) == ts::Executor::Host64);
  auto k = make_overrun();
  std::vector<float> x(256, 3.f), out(256);
  const ts::LaunchOptions o{.grid = {2}, .meta = {{"BLOCK", 128}}, .num_warps = 2};
  const auto args = decltype(k)::arg_values(x, out, 0);
  const ts::ResourceReport r = ts::detail::warmup(k.def(), o, args);
  CHECK(r.target == "host64");
  CHECK(r.num_threads == 128);
  k[o](x, out, 0);
  CHECK(out == x);
}

// Run by ctest with TESSERA_EXECUTOR=gpu-please: warned about on stderr, and ignored.
TEST_CASE("an unknown TESSERA_EXECUTOR is ignored", "[.][env_unknown]") {
  REQUIRE(std::getenv("TESSERA_EXECUTOR") != nullptr);
  const ts::Executor e = ts::default_executor().executor;
  CHECK(e != ts::Executor::Host);
  CHECK(e != ts::Executor::Host64);
}

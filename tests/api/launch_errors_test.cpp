// Launch errors through the public API: each names the kernel, the argument or option and the value,
// is the documented exception type, and leaves the kernel object usable for the next launch.
#include <cstdint>
#include <vector>

#include "launch_test_util.hpp"

using namespace launch_test;
using Catch::Contains;

namespace {
constexpr const char* kFile = "launch_errors_test.cpp";

// The four arguments of a correct scale launch, type-erased, for tests that then break one.
struct ErasedArgs {
  ts::Buffer<float> x{100, ts::Executor::Interpreter}, out{100, ts::Executor::Interpreter};
  std::vector<ts::ArgValue> values() const {
    return {ts::ArgValue::pointer(x.data(), ts::DType::F32, x.size() * sizeof(float)),
            ts::ArgValue::pointer(out.data(), ts::DType::F32, out.size() * sizeof(float)),
            ts::ArgValue::integer(100, ts::DType::I32), ts::ArgValue::floating(2.0, ts::DType::F32)};
  }
};
}  // namespace

TEST_CASE("type-erased launch with the wrong number of arguments", "[api][launch][errors]") {
  auto k = make_scale("count_kernel");
  ErasedArgs a;
  const auto compiles_before = ts::runtime_stats().compiles;
  auto args = a.values();
  args.pop_back();
  CHECK_THAT(error_of<ts::LaunchError>([&] { k.launch(scale_options(100), args); }),
             Contains("kernel 'count_kernel' takes 4 arguments") && Contains("passed 3"));
  args = a.values();
  args.push_back(ts::ArgValue::integer(1, ts::DType::I32));
  CHECK_THAT(error_of<ts::LaunchError>([&] { k.launch(scale_options(100), args); }),
             Contains("kernel 'count_kernel' takes 4 arguments") && Contains("passed 5"));
  CHECK(ts::runtime_stats().compiles == compiles_before);  // refused before anything was traced
  CHECK(scale_works(k));
  // The correct type-erased launch works too.
  CHECK_NOTHROW(k.launch(scale_options(100), a.values()));
}

TEST_CASE("type-erased launch with an argument of the wrong kind", "[api][launch][errors]") {
  auto k = make_scale("kind_kernel");
  ErasedArgs a;

  SECTION("an integer where a pointer is expected") {
    auto args = a.values();
    args[1] = ts::ArgValue::integer(4096, ts::DType::I64);
    CHECK_THAT(error_of<ts::LaunchError>([&] { k.launch(scale_options(100), args); }),
               Contains("argument 1 of kernel 'kind_kernel' is ptr<f32>") && Contains("an integer (4096)"));
  }
  SECTION("a float where an int is expected") {
    auto args = a.values();
    args[2] = ts::ArgValue::floating(2.5, ts::DType::F32);
    CHECK_THAT(error_of<ts::LaunchError>([&] { k.launch(scale_options(100), args); }),
               Contains("argument 2 of kernel 'kind_kernel' is i32") && Contains("a floating-point value (2.5)"));
  }
  SECTION("a pointer where a float is expected") {
    auto args = a.values();
    args[3] = ts::ArgValue::pointer(a.x.data(), ts::DType::F32);
    CHECK_THAT(error_of<ts::LaunchError>([&] { k.launch(scale_options(100), args); }),
               Contains("argument 3 of kernel 'kind_kernel' is f32") && Contains("a pointer"));
  }
  SECTION("an integer too large for the i32 parameter") {
    // The typed path refuses this at conversion; the type-erased path must not truncate it.
    auto args = a.values();
    args[2] = ts::ArgValue::integer(std::int64_t{1} << 32, ts::DType::I64);
    CHECK_THAT(error_of<ts::LaunchError>([&] { k.launch(scale_options(100), args); }),
               Contains("argument 2 of kernel 'kind_kernel' is i32") && Contains("4294967296") &&
                   Contains("does not fit"));
  }
  CHECK(scale_works(k));
}

TEST_CASE("type-erased launch: an integer feeds a float parameter", "[api][launch]") {
  // validate accepts it (as C++ converts int to float); the interpreter must then see 2.0f.
  auto k = make_scale("int_to_float_kernel");
  const auto host = iota_floats(100);
  auto x = ts::Buffer<float>::from_host(host, ts::Executor::Interpreter);
  ts::Buffer<float> out(100, ts::Executor::Interpreter);
  std::vector<ts::ArgValue> args{ts::ArgValue::pointer(x.data(), ts::DType::F32, 400),
                                 ts::ArgValue::pointer(out.data(), ts::DType::F32, 400),
                                 ts::ArgValue::integer(100, ts::DType::I32), ts::ArgValue::integer(2, ts::DType::I32)};
  REQUIRE_NOTHROW(k.launch(scale_options(100), args));
  const auto got = out.to_host();
  for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == host[i] * 2.0f);
}

TEST_CASE("a pointer to the wrong element type", "[api][launch][errors]") {
  auto k = make_scale("pointee_kernel");
  ErasedArgs a;
  auto args = a.values();
  args[0] = ts::ArgValue::pointer(a.x.data(), ts::DType::F16);
  CHECK_THAT(error_of<ts::LaunchError>([&] { k.launch(scale_options(100), args); }),
             Contains("argument 0 of kernel 'pointee_kernel' is ptr<f32>") && Contains("a pointer to f16"));
  // An untyped pointer (void*: DType::Ptr) is taken on the caller's word.
  args[0] = ts::ArgValue::pointer(a.x.data(), ts::DType::Ptr, 400);
  CHECK_NOTHROW(k.launch(scale_options(100), args));
  CHECK(scale_works(k));
}

TEST_CASE("a null pointer argument", "[api][launch][errors]") {
  auto k = make_scale("null_kernel");
  ts::Buffer<float> out(100, ts::Executor::Interpreter);
  CHECK_THAT(error_of<ts::LaunchError>([&] { k[scale_options(100)](nullptr, out, 100, 2.0f); }),
             Contains("argument 0 of kernel 'null_kernel' (ptr<f32>) is a null pointer"));
  float* null_out = nullptr;
  ts::Buffer<float> x(100, ts::Executor::Interpreter);
  CHECK_THAT(error_of<ts::LaunchError>([&] { k[scale_options(100)](x, null_out, 100, 2.0f); }),
             Contains("argument 1 of kernel 'null_kernel'") && Contains("null pointer"));
  CHECK(scale_works(k));
}

TEST_CASE("a pointer misaligned for its element type", "[api][launch][errors]") {
  auto k = make_scale("misaligned_kernel");
  ts::Buffer<float> x(128, ts::Executor::Interpreter), out(128, ts::Executor::Interpreter);
  auto* bad = reinterpret_cast<float*>(reinterpret_cast<char*>(x.data()) + 2);
  const std::string msg = error_of<ts::LaunchError>([&] { k[scale_options(100)](bad, out.data(), 100, 2.0f); });
  CHECK_THAT(msg, Contains("argument 0 of kernel 'misaligned_kernel' (ptr<f32>) is misaligned") &&
                      Contains(fmt_address(bad)) && Contains("element size 4"));
  CHECK(scale_works(k));
}

TEST_CASE("a grid with a zero, a negative or a too-large dimension", "[api][launch][errors]") {
  auto k = make_scale("grid_kernel");
  ts::Buffer<float> x(100, ts::Executor::Interpreter), out(100, ts::Executor::Interpreter);
  auto with_grid = [](ts::Grid g) {
    auto o = scale_options(100);
    o.grid = std::move(g);
    return o;
  };
  const auto compiles_before = ts::runtime_stats().compiles;
  CHECK_THAT(error_of<ts::LaunchError>([&] { k[with_grid({0})](x, out, 100, 2.0f); }),
             Contains("grid of kernel 'grid_kernel' has 0 programs along x") && Contains("at least 1"));
  CHECK_THAT(error_of<ts::LaunchError>([&] { k[with_grid({2, -3})](x, out, 100, 2.0f); }),
             Contains("grid of kernel 'grid_kernel' has -3 programs along y") && Contains("at least 1"));
  CHECK_THAT(error_of<ts::LaunchError>([&] { k[with_grid({2, 70000})](x, out, 100, 2.0f); }),
             Contains("grid of kernel 'grid_kernel' has 70000 programs along y") && Contains("limit of 65535"));
  CHECK_THAT(error_of<ts::LaunchError>([&] { k[with_grid({2, 1, 0})](x, out, 100, 2.0f); }),
             Contains("0 programs along z"));
  // A default grid was never set: it says so as a zero x dimension rather than launching nothing.
  CHECK_THAT(error_of<ts::LaunchError>([&] { k[{.meta = {{"BLOCK", 64}}}](x, out, 100, 2.0f); }),
             Contains("0 programs along x"));
  // Too many dimensions is refused when the grid is built.
  CHECK_THROWS_AS(ts::Grid({1, 1, 1, 1}), ts::LaunchError);
  CHECK(ts::runtime_stats().compiles == compiles_before);
  CHECK(scale_works(k));
}

TEST_CASE("a grid given as a function of the meta-parameters", "[api][launch]") {
  auto k = make_scale("grid_fn_kernel");
  const std::int32_t n = 1000;
  const auto host = iota_floats(n);
  auto x = ts::Buffer<float>::from_host(host, ts::Executor::Interpreter);
  ts::Buffer<float> out(n, ts::Executor::Interpreter);
  int calls = 0;
  ts::MetaValues seen;
  auto grid = [&](const ts::MetaValues& meta) -> ts::Dim3 {
    ++calls;
    seen = meta;
    std::int64_t block = 0;
    for (const auto& [name, value] : meta)
      if (name == "BLOCK") block = value;
    return {static_cast<std::uint32_t>(ts::cdiv(std::int64_t{n}, block)), 1, 1};
  };
  const ts::MetaValues meta{{"BLOCK", 128}, {"UNUSED_HINT", 3}};
  k[{.grid = grid, .meta = meta, .executor = ts::Executor::Interpreter}](x, out, n, 0.5f);
  CHECK(calls == 1);
  CHECK(seen == meta);
  const auto got = out.to_host();
  for (std::int32_t i = 0; i < n; ++i) REQUIRE(got[i] == host[i] * 0.5f);

  // Its result is checked like a literal grid's.
  auto zero = [](const ts::MetaValues&) -> ts::Dim3 { return {0, 1, 1}; };
  CHECK_THAT(error_of<ts::LaunchError>([&] {
               k[{.grid = zero, .meta = meta, .executor = ts::Executor::Interpreter}](x, out, n, 0.5f);
             }),
             Contains("grid of kernel 'grid_fn_kernel' has 0 programs along x"));
  CHECK(scale_works(k));
}

TEST_CASE("num_warps that is not a power of two from 1 to 32", "[api][launch][errors]") {
  auto k = make_scale("warps_kernel");
  ts::Buffer<float> x(100, ts::Executor::Interpreter), out(100, ts::Executor::Interpreter);
  for (int warps : {0, 3, 64, -4}) {
    auto o = scale_options(100);
    o.num_warps = warps;
    CAPTURE(warps);
    CHECK_THAT(error_of<ts::LaunchError>([&] { k[o](x, out, 100, 2.0f); }),
               Contains("num_warps of kernel 'warps_kernel'") && Contains("power of two from 1 to 32") &&
                   Contains("got " + std::to_string(warps)));
  }
  for (int warps : {1, 2, 8, 32}) {
    auto o = scale_options(100);
    o.num_warps = warps;
    CAPTURE(warps);
    CHECK_NOTHROW(k[o](x, out, 100, 2.0f));
  }
  CHECK(scale_works(k));
}

TEST_CASE("an unknown meta-parameter names itself and the kernel's source line", "[api][launch][errors]") {
  static int line = 0;  // static: a kernel function captures nothing
  auto k = ts::kernel("meta_kernel", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n) {
    line = __LINE__; const int block = ts::meta("BLOCK_SIZE");
    auto offs = ts::program_id(0) * block + ts::arange(0, block);
    auto mask = offs < n;
    ts::store(out + offs, ts::load(x + offs, mask), mask);
  });
  const auto host = iota_floats(100);
  auto x = ts::Buffer<float>::from_host(host, ts::Executor::Interpreter);
  ts::Buffer<float> out(100, ts::Executor::Interpreter);
  const auto compiles_before = ts::runtime_stats().compiles;
  const std::string msg = error_of<ts::ProgramError>([&] { k[scale_options(100)](x, out, 100); });
  CHECK_THAT(msg, Contains("unknown meta-parameter 'BLOCK_SIZE'") && Contains("the launch gives: BLOCK)") &&
                      Contains(at_line(kFile, line)));
  CHECK(ts::runtime_stats().compiles == compiles_before);
  // The failed trace cached nothing: the same kernel with the name given now compiles and runs.
  ts::LaunchOptions good{.grid = {2}, .meta = {{"BLOCK_SIZE", 64}}, .executor = ts::Executor::Interpreter};
  REQUIRE_NOTHROW(k[good](x, out, 100));
  CHECK(ts::runtime_stats().compiles == compiles_before + 1);
  CHECK(out.to_host() == host);
  // And the failing launch still fails the same way (not served from some half-filled cache entry).
  CHECK_THAT(error_of<ts::ProgramError>([&] { k[scale_options(100)](x, out, 100); }),
             Contains("'BLOCK_SIZE'"));
}

TEST_CASE("an unmasked out-of-bounds access through a Buffer names the source line", "[api][launch][errors]") {
  static int line = 0;  // static: a kernel function captures nothing
  auto k = ts::kernel("oob_kernel", [](ts::Ptr<float> x, ts::Ptr<float> out) {
    auto offs = ts::program_id(0) * 64 + ts::arange(0, 64);
    line = __LINE__; auto v = ts::load(x + offs);
    ts::store(out + offs, v);
  });
  auto x = ts::Buffer<float>::from_host(iota_floats(100), ts::Executor::Interpreter);
  ts::Buffer<float> out(128, ts::Executor::Interpreter);
  ts::LaunchOptions o{.grid = {2}, .executor = ts::Executor::Interpreter};
  const std::string msg = error_of<ts::MemoryAccessError>([&] { k[o](x, out); });
  CHECK_THAT(msg, Contains("out-of-bounds load") && Contains(at_line(kFile, line)) && Contains("400 bytes"));
  // A launch whose accesses fit runs fine on the same (already compiled) kernel.
  auto x128 = ts::Buffer<float>::from_host(iota_floats(128), ts::Executor::Interpreter);
  const auto compiles_before = ts::runtime_stats().compiles;
  REQUIRE_NOTHROW(k[o](x128, out));
  CHECK(ts::runtime_stats().compiles == compiles_before);
  CHECK(out.to_host() == iota_floats(128));
}

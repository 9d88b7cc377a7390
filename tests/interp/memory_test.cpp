// Memory safety: out-of-bounds, straddling, misaligned and null accesses are MemoryAccessErrors
// naming the source line; masked lanes are never touched; launch arguments are checked.
#include <catch2/catch.hpp>

#include "interp_test_util.hpp"

using namespace tessera;
using namespace tessera::test;
using Catch::Matchers::Contains;

namespace {

constexpr std::int64_t kN = 16;

struct CopyKernel {
  bool masked = false;     // lanes >= n are masked off (n is the third argument)
  bool with_other = false;  // masked lanes of the load yield -7.5
};

// copy(x, out, n): out[i] = x[i] for i in arange(16); the load is at my_kernel.cpp:42:7, the
// store at my_kernel.cpp:43:3.
std::unique_ptr<ir::Module> copy_kernel(CopyKernel c) {
  KernelBuilder k("copy");
  Value* x = k.arg(Type::pointer(DType::F32), "x");
  Value* out = k.arg(Type::pointer(DType::F32), "out");
  Value* n = k.arg(Type::scalar(DType::I32), "n");
  Value* offs = k.arange(kN);
  Value* mask = c.masked ? k.compare(OpKind::CmpLt, offs, k.splat(n, {kN})) : nullptr;
  Value* other = c.with_other ? k.b.float_constant(DType::F32, -7.5, {kN}) : nullptr;
  Value* xp = k.addptr(k.splat(x, {kN}), offs);
  Value* op = k.addptr(k.splat(out, {kN}), offs);
  k.at("my_kernel.cpp", 42, 7);
  Value* v = k.load(xp, mask, other);
  k.at("my_kernel.cpp", 43, 3);
  k.store(op, v, mask);
  k.ret();
  return std::move(k.m);
}

// A byte count meaning "a raw pointer, size unknown".
constexpr std::size_t kRaw = SIZE_MAX;

ArgValue f32_pointer(void* p, std::size_t bytes) {
  return bytes == kRaw ? ArgValue::pointer(p, DType::F32) : ArgValue::pointer(p, DType::F32, bytes);
}

std::vector<ArgValue> copy_args(void* x, std::size_t x_bytes, void* out, std::size_t out_bytes, std::int64_t n) {
  return {f32_pointer(x, x_bytes), f32_pointer(out, out_bytes), ArgValue::integer(n, DType::I32)};
}

}  // namespace

TEST_CASE("an unmasked load past the end names the line, the lane and the argument", "[interp][memory]") {
  const auto m = copy_kernel({});
  std::vector<float> x(10, 1.f), out(kN, 0.f);
  const auto args = copy_args(x.data(), x.size() * 4, out.data(), out.size() * 4, 10);
  CHECK_THROWS_AS(interp::run(*m, {1, 1, 1}, args), MemoryAccessError);
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, args),
                    Contains("out-of-bounds load at my_kernel.cpp:42:7") && Contains("element 10 of the tile") &&
                        Contains("argument 'x' (40 bytes)"));
  CHECK(out == std::vector<float>(kN, 0.f));  // the failed program stored nothing
}

TEST_CASE("an unmasked store past the end is an out-of-bounds store", "[interp][memory]") {
  const auto m = copy_kernel({});
  std::vector<float> x(kN, 1.f), out(12, 0.f);
  const auto args = copy_args(x.data(), x.size() * 4, out.data(), out.size() * 4, kN);
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, args),
                    Contains("out-of-bounds store at my_kernel.cpp:43:3") && Contains("element 12") &&
                        Contains("argument 'out' (48 bytes)"));
}

TEST_CASE("masked lanes outside the buffer are not accessed and yield other or zero", "[interp][memory]") {
  for (bool with_other : {false, true}) {
    INFO("with other: " << with_other);
    const auto m = copy_kernel({.masked = true, .with_other = with_other});
    std::vector<float> x(10), out(10, 0.f);
    for (int i = 0; i < 10; ++i) x[i] = static_cast<float>(i) + 0.5f;
    const auto args = copy_args(x.data(), x.size() * 4, out.data(), out.size() * 4, 10);
    REQUIRE_NOTHROW(interp::run(*m, {1, 1, 1}, args));
    CHECK(out == x);
  }
  // The masked-off lanes of the load carry `other` (or zero) into the value.
  KernelBuilder k("other");
  Value* x = k.arg(Type::pointer(DType::F32), "x");
  Value* out = k.arg(Type::pointer(DType::F32), "out");
  Value* offs = k.arange(4);
  Value* mask = k.compare(OpKind::CmpLt, offs, k.b.int_constant(DType::I32, 2, {4}));
  Value* v = k.load(k.addptr(k.splat(x, {4}), offs), mask, k.b.float_constant(DType::F32, -7.5, {4}));
  k.store(k.contiguous(out, 4), v);
  k.ret();
  std::vector<float> xs{1.f, 2.f}, outs(4);
  std::vector<ArgValue> args{buffer_arg(xs, DType::F32), buffer_arg(outs, DType::F32)};
  interp::run(*k.m, {1, 1, 1}, args);
  CHECK(outs == std::vector<float>{1.f, 2.f, -7.5f, -7.5f});
}

TEST_CASE("an element straddling the end of a known buffer is out of bounds", "[interp][memory]") {
  const auto m = copy_kernel({});
  std::vector<float> x(kN, 1.f), out(kN);
  // x claims 10 bytes: element 2 (bytes 8..11) runs past the end, even though memory exists.
  const auto args = copy_args(x.data(), 10, out.data(), out.size() * 4, kN);
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, args),
                    Contains("out-of-bounds load at my_kernel.cpp:42:7") && Contains("element 2") &&
                        Contains("run past the end of the buffer of argument 'x' (10 bytes)"));
}

TEST_CASE("misaligned and null accesses are errors, even on raw pointers", "[interp][memory]") {
  const auto m = copy_kernel({});
  std::vector<float> x(kN + 1), out(kN);
  auto* misaligned = reinterpret_cast<char*>(x.data()) + 2;
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, copy_args(misaligned, kN * 4, out.data(), kN * 4, kN)),
                    Contains("misaligned load at my_kernel.cpp:42:7") && Contains("4-byte element"));
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, copy_args(nullptr, kRaw, out.data(), kRaw, kN)),
                    Contains("null pointer load at my_kernel.cpp:42:7"));
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, copy_args(x.data(), kRaw, nullptr, kRaw, kN)),
                    Contains("null pointer store at my_kernel.cpp:43:3"));
}

TEST_CASE("a zero-length buffer is a size, not an unknown one: every access is out of bounds", "[interp][memory]") {
  const auto m = copy_kernel({.masked = true});
  std::vector<float> x(kN, 1.f), out(kN, 0.f);
  // n = 0: every lane is masked off, nothing is touched.
  REQUIRE_NOTHROW(interp::run(*m, {1, 1, 1}, copy_args(x.data(), 0, out.data(), 0, 0)));
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, copy_args(x.data(), 0, out.data(), kN * 4, 1)),
                    Contains("out-of-bounds load at my_kernel.cpp:42:7") && Contains("argument 'x' (0 bytes)"));
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, copy_args(x.data(), kN * 4, out.data(), 0, 1)),
                    Contains("out-of-bounds store at my_kernel.cpp:43:3") && Contains("argument 'out' (0 bytes)"));
  CHECK(out == std::vector<float>(kN, 0.f));
  // Through the public API: an empty ts::Buffer is sized, not raw.
  std::vector<float> none;
  const ArgValue empty = ArgValue::pointer(none.data(), DType::F32, 0);
  CHECK(empty.sized);
  CHECK_FALSE(ArgValue::pointer(x.data(), DType::F32).sized);
}

TEST_CASE("raw pointers are the caller's to vouch for, sized ones are bounded by their own buffer", "[interp][memory]") {
  const auto m = copy_kernel({});
  std::vector<float> x(kN, 3.f), out(kN, 0.f);
  // No sizes at all: the user vouches for the pointers.
  REQUIRE_NOTHROW(interp::run(*m, {1, 1, 1}, copy_args(x.data(), kRaw, out.data(), kRaw, kN)));
  CHECK(out == x);
  // out has a size, x does not: x's lanes derive from a raw pointer, so they are not bounded.
  std::fill(out.begin(), out.end(), 0.f);
  REQUIRE_NOTHROW(interp::run(*m, {1, 1, 1}, copy_args(x.data(), kRaw, out.data(), kN * 4, kN)));
  CHECK(out == x);
  // Registering memory as an extra buffer bounds raw pointers by the known buffers again.
  std::vector<float> elsewhere(kN);
  const interp::HostBuffer extra[] = {{elsewhere.data(), elsewhere.size() * sizeof(float)}};
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, copy_args(x.data(), kRaw, out.data(), kN * 4, kN), extra),
                    Contains("out-of-bounds load at my_kernel.cpp:42:7"));
}

TEST_CASE("an overrun of a sized argument names that argument, even where a raw one's memory lies", "[interp][memory]") {
  const auto m = copy_kernel({});
  // One allocation: x is its first 8 floats, out the next 8 (both sized). x's lanes 8..15 run into
  // out's memory: they must be reported against x, not accepted because out's buffer holds them.
  std::vector<float> memory(2 * kN, 1.f);
  const auto args = copy_args(memory.data(), 8 * 4, memory.data() + 8, 8 * 4, kN);
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, args),
                    Contains("out-of-bounds load at my_kernel.cpp:42:7") && Contains("element 8 of the tile") &&
                        Contains("argument 'x' (32 bytes) it derives from"));
  // The other way round: out sized and overrun by the store, x raw. The store is named, with 'out'.
  std::vector<float> xs(kN, 2.f), small_out(4 * kN);
  const auto args2 = copy_args(xs.data(), kRaw, small_out.data(), 12 * 4, kN);
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, args2),
                    Contains("out-of-bounds store at my_kernel.cpp:43:3") && Contains("argument 'out' (48 bytes)"));
}

TEST_CASE("a store through a scalar pointer is checked too", "[interp][memory]") {
  KernelBuilder k("scalar_store");
  Value* out = k.arg(Type::pointer(DType::I32), "out");
  Value* sized = k.arg(Type::pointer(DType::I32), "sized");
  k.at("scalar.cpp", 7);
  k.store(k.addptr(out, k.i32(1)), k.i32(5));
  k.ret();
  std::int32_t small[1] = {0}, other[4] = {};
  std::vector<ArgValue> args{ArgValue::pointer(small, DType::I32, sizeof small), ArgValue::pointer(other, DType::I32, sizeof other)};
  CHECK_THROWS_WITH(interp::run(*k.m, {1, 1, 1}, args),
                    Contains("out-of-bounds store at scalar.cpp:7") && Contains("the scalar pointer"));
  (void)sized;
}

TEST_CASE("launch arguments must match the kernel's parameters", "[interp][launch]") {
  const auto m = copy_kernel({});
  std::vector<float> x(kN), out(kN);
  std::vector<ArgValue> too_few{ArgValue::pointer(x.data(), DType::F32), ArgValue::pointer(out.data(), DType::F32)};
  CHECK_THROWS_AS(interp::run(*m, {1, 1, 1}, too_few), LaunchError);
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, too_few), Contains("takes 3 arguments but 2 were given"));
  std::vector<ArgValue> wrong_kind{ArgValue::integer(0, DType::I64), ArgValue::pointer(out.data(), DType::F32),
                                   ArgValue::integer(kN, DType::I32)};
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, wrong_kind), Contains("argument 'x'") && Contains("is a pointer"));
  std::vector<ArgValue> float_for_int{ArgValue::pointer(x.data(), DType::F32), ArgValue::pointer(out.data(), DType::F32),
                                      ArgValue::floating(16.0, DType::F32)};
  CHECK_THROWS_AS(interp::run(*m, {1, 1, 1}, float_for_int), LaunchError);
}

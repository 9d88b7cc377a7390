// atomic_rmw / atomic_cas on the interpreter, with IR built by hand: every op on every supported
// element type, masks (masked lanes untouched, returning 0), many lanes on one address (applied
// once each, in lane order), memory checks, the verifier's type rule, and passes keeping atomics.
#include <catch2/catch.hpp>

#include <cstring>

#include "interp_test_util.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/transforms/cse.hpp"
#include "jit/transforms/dce.hpp"

using namespace tessera;
using namespace tessera::test;
using Catch::Matchers::Contains;

namespace {

constexpr std::int64_t kN = 8;

std::map<std::string, ir::Attr> rmw_attrs(const std::string& op) {
  return {{"op", op}, {"sem", std::string("acq_rel")}, {"scope", std::string("gpu")}};
}

// rmw(p, v, old, n): old[i] = atomic_<op>(p + idx[i], v[i], mask i < n), idx[i] = i % `spread`.
std::unique_ptr<ir::Module> rmw_kernel(DType d, const std::string& op, std::int64_t spread, bool masked) {
  KernelBuilder k("rmw");
  Value* p = k.arg(Type::pointer(d), "p");
  Value* v = k.arg(Type::pointer(d), "v");
  Value* old = k.arg(Type::pointer(d), "old");
  Value* n = k.arg(Type::scalar(DType::I32), "n");
  Value* offs = k.arange(kN);
  Value* idx = k.binary(OpKind::Rem, offs, k.splat(k.i32(spread), {kN}));
  Value* val = k.load(k.addptr(k.splat(v, {kN}), offs));
  std::vector<Value*> operands{k.addptr(k.splat(p, {kN}), idx), val};
  if (masked) operands.push_back(k.compare(OpKind::CmpLt, offs, k.splat(n, {kN})));
  k.at("atomics.cpp", 7, 5);
  Value* r = k.op(OpKind::AtomicRmw, operands, tile_of(d, {kN}), rmw_attrs(op));
  k.store(k.addptr(k.splat(old, {kN}), offs), r);
  k.ret();
  ir::verify(*k.m);
  return std::move(k.m);
}

template <class T>
struct RmwCase {
  std::vector<T> memory, values, olds;
};

// The reference: lanes in order, masked lanes untouched and returning 0.
template <class T, class F>
RmwCase<T> run_rmw(DType d, const std::string& op, std::int64_t spread, std::int64_t n, std::vector<T> memory,
                   std::vector<T> values, F combine) {
  auto m = rmw_kernel(d, op, spread, /*masked=*/true);
  std::vector<T> expect_mem = memory, expect_old(kN, T(0)), old(kN, T(99));
  for (std::int64_t i = 0; i < n; ++i) {
    T& cell = expect_mem[static_cast<std::size_t>(i % spread)];
    expect_old[i] = cell;
    cell = combine(cell, values[i]);
  }
  std::vector<ArgValue> args{buffer_arg(memory, d), buffer_arg(values, d), buffer_arg(old, d), ArgValue::integer(n, DType::I32)};
  interp::run(*m, {1, 1, 1}, args);
  CHECK(memory == expect_mem);
  CHECK(old == expect_old);
  return {memory, values, old};
}

template <class T>
void check_int_ops(DType d) {
  std::vector<T> values{T(5), T(3), T(9), T(1), T(12), T(7), T(2), T(6)};
  const std::vector<T> memory{T(4), T(10), T(8)};
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{5}, kN}) {
    INFO("n = " << n);
    run_rmw<T>(d, "add", 3, n, memory, values, [](T a, T b) { return T(a + b); });
    run_rmw<T>(d, "max", 3, n, memory, values, [](T a, T b) { return std::max(a, b); });
    run_rmw<T>(d, "min", 3, n, memory, values, [](T a, T b) { return std::min(a, b); });
    run_rmw<T>(d, "and", 3, n, memory, values, [](T a, T b) { return T(a & b); });
    run_rmw<T>(d, "or", 3, n, memory, values, [](T a, T b) { return T(a | b); });
    run_rmw<T>(d, "xchg", 3, n, memory, values, [](T, T b) { return b; });
  }
}

}  // namespace

TEST_CASE("integer atomics apply lane by lane and skip masked lanes", "[interp][atomics]") {
  SECTION("i32") { check_int_ops<std::int32_t>(DType::I32); }
  SECTION("u32") { check_int_ops<std::uint32_t>(DType::U32); }
  SECTION("i64") { check_int_ops<std::int64_t>(DType::I64); }
  SECTION("u64") { check_int_ops<std::uint64_t>(DType::U64); }
}

TEST_CASE("signedness decides integer max and min, add wraps", "[interp][atomics]") {
  std::vector<std::int32_t> v{-1, 5, INT32_MAX, 1, 0, 0, 0, 0};
  run_rmw<std::int32_t>(DType::I32, "max", 1, 2, {3}, v, [](auto a, auto b) { return std::max(a, b); });
  run_rmw<std::int32_t>(DType::I32, "add", 1, 4, {1}, v, [](std::int32_t a, std::int32_t b) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
  });
  std::vector<std::uint32_t> u{0xffffffffu, 5, 0, 0, 0, 0, 0, 0};
  run_rmw<std::uint32_t>(DType::U32, "max", 1, 2, {3}, u, [](auto a, auto b) { return std::max(a, b); });
  run_rmw<std::uint32_t>(DType::U32, "min", 1, 2, {3}, u, [](auto a, auto b) { return std::min(a, b); });
  std::vector<std::uint64_t> w{0x8000000000000000ull, 5, 0, 0, 0, 0, 0, 0};  // negative as an i64
  run_rmw<std::uint64_t>(DType::U64, "max", 1, 2, {3}, w, [](auto a, auto b) { return std::max(a, b); });
  run_rmw<std::uint64_t>(DType::U64, "min", 1, 2, {3}, w, [](auto a, auto b) { return std::min(a, b); });
}

TEST_CASE("float atomics: add, max, min like fmax/fmin, xchg", "[interp][atomics]") {
  std::vector<float> vf{1.5f, -2.f, NAN, 4.25f, 0.5f, -8.f, 3.f, 2.f};
  for (std::int64_t n : {std::int64_t{3}, kN}) {
    run_rmw<float>(DType::F32, "add", 2, n, {0.f, 1.f}, {1.5f, -2.f, 0.25f, 4.25f, 0.5f, -8.f, 3.f, 2.f},
                   [](float a, float b) { return a + b; });
    run_rmw<float>(DType::F32, "max", 2, n, {0.f, 1.f}, vf, [](float a, float b) { return std::fmax(a, b); });
    run_rmw<float>(DType::F32, "min", 2, n, {0.f, 1.f}, vf, [](float a, float b) { return std::fmin(a, b); });
    run_rmw<float>(DType::F32, "xchg", 2, n, {0.f, 1.f}, {1.5f, -2.f, 0.25f, 4.25f, 0.5f, -8.f, 3.f, 2.f},
                   [](float, float b) { return b; });
  }
  std::vector<double> vd{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8};
  run_rmw<double>(DType::F64, "add", 1, kN, {1.0}, vd, [](double a, double b) { return a + b; });
  run_rmw<double>(DType::F64, "max", 4, 6, {0.0, 1.0, 0.15, 9.0}, vd, [](double a, double b) { return std::fmax(a, b); });
}

TEST_CASE("f16 and bf16 atomic add round after every lane", "[interp][atomics]") {
  // 1 + 8 lanes of 2^-11 in f16: each add of half an ulp ties to even and leaves 1.0.
  auto m = rmw_kernel(DType::F16, "add", 1, /*masked=*/false);
  std::vector<std::uint16_t> mem{0x3c00}, vals(kN, 0x1000), old(kN, 0);  // 1.0, 2^-11
  interp::run(*m, {1, 1, 1}, std::vector<ArgValue>{buffer_arg(mem, DType::F16), buffer_arg(vals, DType::F16),
                                                   buffer_arg(old, DType::F16), ArgValue::integer(kN, DType::I32)});
  CHECK(mem[0] == 0x3c00);
  CHECK(old == std::vector<std::uint16_t>(kN, 0x3c00));
  auto mb = rmw_kernel(DType::BF16, "add", 1, /*masked=*/false);
  std::vector<std::uint16_t> bmem{ref_bf16(1.0)}, bvals(kN, ref_bf16(0.5)), bold(kN, 0);
  interp::run(*mb, {1, 1, 1}, std::vector<ArgValue>{buffer_arg(bmem, DType::BF16), buffer_arg(bvals, DType::BF16),
                                                    buffer_arg(bold, DType::BF16), ArgValue::integer(kN, DType::I32)});
  CHECK(bmem[0] == ref_bf16(5.0));
  CHECK(bold[3] == ref_bf16(2.5));
}

TEST_CASE("atomic_cas stores where the bits equal cmp and returns the old values", "[interp][atomics]") {
  KernelBuilder k("cas");
  Value* p = k.arg(Type::pointer(DType::F32), "p");
  Value* old = k.arg(Type::pointer(DType::F32), "old");
  Value* offs = k.arange(kN);
  Value* ptrs = k.addptr(k.splat(p, {kN}), offs);
  Value* cmp = k.b.float_constant(DType::F32, 0.0, {kN});
  Value* val = k.op(OpKind::Cast, {offs}, tile_of(DType::F32, {kN}));
  Value* r = k.op(OpKind::AtomicCas, {ptrs, cmp, val}, tile_of(DType::F32, {kN}),
                  {{"sem", std::string("relaxed")}, {"scope", std::string("cta")}});
  k.store(k.addptr(k.splat(old, {kN}), offs), r);
  k.ret();
  ir::verify(*k.m);
  std::vector<float> mem{0.f, 1.f, -0.f, 0.f, 2.f, 0.f, NAN, 0.f}, got(kN, 9.f);
  const std::vector<float> before = mem;
  interp::run(*k.m, {1, 1, 1}, std::vector<ArgValue>{buffer_arg(mem, DType::F32), buffer_arg(got, DType::F32)});
  const std::vector<float> expect{0.f, 1.f, -0.f, 3.f, 2.f, 5.f, NAN, 7.f};  // -0.0 and NaN differ in bits
  for (std::int64_t i = 0; i < kN; ++i) {
    INFO("lane " << i);
    CHECK(std::memcmp(&mem[i], &expect[i], 4) == 0);
    CHECK(std::memcmp(&got[i], &before[i], 4) == 0);
  }
}

TEST_CASE("programs run in order: a scalar atomic counter hands out tickets", "[interp][atomics]") {
  // out[y * 3 + x] = atomic_add(counter, 1): the counter is shared on purpose (an atomic), each
  // program stores its own element.
  KernelBuilder k("ticket");
  Value* counter = k.arg(Type::pointer(DType::I32), "counter");
  Value* out = k.arg(Type::pointer(DType::I32), "out");
  Value* t = k.op(OpKind::AtomicRmw, {counter, k.i32(1)}, Type::scalar(DType::I32), rmw_attrs("add"));
  Value* linear = k.binary(OpKind::Add, k.binary(OpKind::Mul, k.program_id(1), k.i32(3)), k.program_id(0));
  k.store(k.addptr(out, linear), t);
  k.ret();
  ir::verify(*k.m);
  std::vector<std::int32_t> c{10}, o(6, -1);
  interp::run(*k.m, {3, 2, 1}, std::vector<ArgValue>{buffer_arg(c, DType::I32), buffer_arg(o, DType::I32)});
  CHECK(c[0] == 16);
  // Program (x, y) runs as number y*3 + x (x fastest), so it draws ticket 10 + y*3 + x.
  CHECK(o == std::vector<std::int32_t>{10, 11, 12, 13, 14, 15});
}

TEST_CASE("storing the tickets of two programs to one element is a race", "[interp][atomics][races]") {
  KernelBuilder k("ticket_race");
  Value* counter = k.arg(Type::pointer(DType::I32), "counter");
  Value* out = k.arg(Type::pointer(DType::I32), "out");
  Value* t = k.op(OpKind::AtomicRmw, {counter, k.i32(1)}, Type::scalar(DType::I32), rmw_attrs("add"));
  k.at("ticket.cpp", 5);
  k.store(k.addptr(out, k.program_id(0)), t);  // programs (x, 0) and (x, 1) both store out[x]
  k.ret();
  std::vector<std::int32_t> c{10}, o(6, -1);
  CHECK_THROWS_WITH(interp::run(*k.m, {3, 2, 1}, std::vector<ArgValue>{buffer_arg(c, DType::I32), buffer_arg(o, DType::I32)}),
                    Contains("data race") && Contains("ticket.cpp:5:1 in program (0, 1, 0)") &&
                        Contains("program (0, 0, 0) writes"));
}

TEST_CASE("active atomic lanes get the memory checks, masked lanes none", "[interp][atomics]") {
  auto m = rmw_kernel(DType::I32, "add", kN, /*masked=*/true);
  std::vector<std::int32_t> mem(4, 0), v(kN, 1), old(kN, 0);
  auto args = [&](std::int64_t n) {
    return std::vector<ArgValue>{buffer_arg(mem, DType::I32), buffer_arg(v, DType::I32), buffer_arg(old, DType::I32),
                                 ArgValue::integer(n, DType::I32)};
  };
  CHECK_NOTHROW(interp::run(*m, {1, 1, 1}, args(4)));
  CHECK(mem == std::vector<std::int32_t>(4, 1));
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, args(5)),
                    Contains("out-of-bounds") && Contains("atomics.cpp:7:5") && Contains("element 4 of the tile"));
}

TEST_CASE("the verifier checks atomic attributes and element types", "[interp][atomics][verifier]") {
  auto build = [](DType d, std::map<std::string, ir::Attr> attrs, bool bad_mask = false) {
    KernelBuilder k("bad");
    Value* p = k.arg(Type::pointer(d), "p");
    Value* v = k.arg(Type::scalar(d), "v");
    std::vector<Value*> ops{p, v};
    if (bad_mask) ops.push_back(k.i32(1));
    k.op(OpKind::AtomicRmw, ops, Type::scalar(d), std::move(attrs));
    k.ret();
    return std::move(k.m);
  };
  CHECK_NOTHROW(ir::verify(*build(DType::I32, rmw_attrs("and"))));
  CHECK_THROWS_WITH(ir::verify(*build(DType::F32, rmw_attrs("and"))), Contains("atomic and does not support f32"));
  CHECK_THROWS_WITH(ir::verify(*build(DType::F16, rmw_attrs("max"))), Contains("atomic max does not support f16"));
  CHECK_THROWS_WITH(ir::verify(*build(DType::I8, rmw_attrs("add"))), Contains("does not support i8"));
  CHECK_THROWS_WITH(ir::verify(*build(DType::I32, rmw_attrs("sub"))), Contains("'op'"));
  auto no_scope = rmw_attrs("add");
  no_scope["scope"] = std::string("warp");
  CHECK_THROWS_WITH(ir::verify(*build(DType::I32, no_scope)), Contains("'scope'"));
  CHECK_THROWS_WITH(ir::verify(*build(DType::I32, rmw_attrs("add"), true)), Contains("mask must be i1"));
}

TEST_CASE("cse and dce keep atomics, even identical ones with unused results", "[interp][atomics][passes]") {
  KernelBuilder k("twice");
  Value* p = k.arg(Type::pointer(DType::I32), "p");
  Value* one = k.i32(1);
  k.op(OpKind::AtomicRmw, {p, one}, Type::scalar(DType::I32), rmw_attrs("add"));
  k.op(OpKind::AtomicRmw, {p, one}, Type::scalar(DType::I32), rmw_attrs("add"));
  k.op(OpKind::AtomicCas, {p, one, one}, Type::scalar(DType::I32),
       {{"sem", std::string("acquire")}, {"scope", std::string("sys")}});
  k.ret();
  transforms::cse(*k.m);
  transforms::dce(*k.m);
  ir::verify(*k.m);
  std::vector<std::int32_t> c{0};
  interp::run(*k.m, {4, 1, 1}, std::vector<ArgValue>{buffer_arg(c, DType::I32)});
  CHECK(c[0] == 8);  // 4 programs x 2 adds; the cas never matches (the value is >= 2 by then)
}

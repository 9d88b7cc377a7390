// Races between the programs of one launch: two programs writing one address without an atomic,
// or one writing where another reads, are reported with both program ids and both source lines;
// programs that each touch their own elements, and atomics, are not.
#include <catch2/catch.hpp>

#include "interp_test_util.hpp"

using namespace tessera;
using namespace tessera::test;
using Catch::Matchers::Contains;

namespace {

constexpr std::int64_t kBlock = 16;

// out[shift * pid + arange(16)] = x[...]: with shift 16 each program has its own elements; with
// shift 8, program p + 1 writes the upper half of what program p wrote.
std::unique_ptr<ir::Module> shifted_copy(std::int64_t shift) {
  KernelBuilder k("shifted_copy");
  Value* x = k.arg(Type::pointer(DType::F32), "x");
  Value* out = k.arg(Type::pointer(DType::F32), "out");
  Value* base = k.splat(k.binary(OpKind::Mul, k.program_id(0), k.i32(shift)), {kBlock});
  Value* offs = k.binary(OpKind::Add, base, k.arange(kBlock));
  k.at("race.cpp", 10);
  Value* v = k.load(k.addptr(k.splat(x, {kBlock}), offs));
  k.at("race.cpp", 11);
  k.store(k.addptr(k.splat(out, {kBlock}), offs), v);
  k.ret();
  return std::move(k.m);
}

// Each program reads out[pid - 1 + i] (the previous program's elements) and writes its own.
std::unique_ptr<ir::Module> reads_neighbour() {
  KernelBuilder k("neighbour");
  Value* out = k.arg(Type::pointer(DType::F32), "out");
  Value* base = k.splat(k.binary(OpKind::Mul, k.program_id(0), k.i32(kBlock)), {kBlock});
  Value* offs = k.binary(OpKind::Add, base, k.arange(kBlock));
  Value* mine = k.addptr(k.splat(out, {kBlock}), offs);
  Value* pid = k.program_id(0);
  Value* first = k.compare(OpKind::CmpEq, pid, k.i32(0));
  // Program 0 reads its own first element; the others read the last element of the previous one.
  Value* read_at = k.binary(OpKind::Sub, k.binary(OpKind::Mul, pid, k.i32(kBlock)), k.i32(1));
  Value* safe = k.op(OpKind::Select, {first, k.i32(0), read_at}, Type::scalar(DType::I32));
  k.at("neighbour.cpp", 20);
  Value* prev = k.load(k.addptr(out, safe));
  k.at("neighbour.cpp", 21);
  k.store(mine, k.splat(prev, {kBlock}));
  k.ret();
  return std::move(k.m);
}

}  // namespace

TEST_CASE("programs that each store their own elements run without a report", "[interp][races]") {
  const auto m = shifted_copy(kBlock);
  std::vector<float> x(4 * kBlock, 2.f), out(4 * kBlock, 0.f);
  std::vector<ArgValue> args{buffer_arg(x, DType::F32), buffer_arg(out, DType::F32)};
  REQUIRE_NOTHROW(interp::run(*m, {4, 1, 1}, args));
  CHECK(out == x);
}

TEST_CASE("two programs storing one address is a race naming both programs and lines", "[interp][races]") {
  const auto m = shifted_copy(kBlock / 2);
  std::vector<float> x(4 * kBlock, 2.f), out(4 * kBlock, 0.f);
  std::vector<ArgValue> args{buffer_arg(x, DType::F32), buffer_arg(out, DType::F32)};
  CHECK_THROWS_AS(interp::run(*m, {3, 1, 1}, args), MemoryAccessError);
  CHECK_THROWS_WITH(interp::run(*m, {3, 1, 1}, args),
                    Contains("data race between programs") && Contains("the store at race.cpp:11:1 in program (1, 0, 0)") &&
                        Contains("byte 32 of the buffer of argument 'out'") &&
                        Contains("program (0, 0, 0) writes (the store at race.cpp:11:1)"));
}

TEST_CASE("a store where another program read, or a read of another program's store, is a race", "[interp][races]") {
  const auto m = reads_neighbour();
  std::vector<float> out(4 * kBlock, 1.f);
  std::vector<ArgValue> args{buffer_arg(out, DType::F32)};
  // Program 1 reads element 15, which program 0 wrote.
  CHECK_THROWS_WITH(interp::run(*m, {2, 1, 1}, args),
                    Contains("the load at neighbour.cpp:20:1 in program (1, 0, 0) reads byte 60") &&
                        Contains("program (0, 0, 0) writes (the store at neighbour.cpp:21:1)"));
  // One program alone reads and writes its own elements: no race.
  REQUIRE_NOTHROW(interp::run(*m, {1, 1, 1}, args));
}

TEST_CASE("atomics from every program on one address are not a race", "[interp][races]") {
  KernelBuilder k("count");
  Value* counter = k.arg(Type::pointer(DType::I32), "counter");
  k.op(OpKind::AtomicRmw, {counter, k.i32(1)}, Type::scalar(DType::I32),
       {{"op", std::string("add")}, {"sem", std::string("acq_rel")}, {"scope", std::string("gpu")}});
  k.ret();
  std::vector<std::int32_t> c{0};
  std::vector<ArgValue> args{buffer_arg(c, DType::I32)};
  REQUIRE_NOTHROW(interp::run(*k.m, {5, 3, 1}, args));
  CHECK(c[0] == 15);
}

// for loops with carried values (both step signs), if with results, select and num_programs.
#include <catch2/catch.hpp>

#include <random>

#include "interp_test_util.hpp"

using namespace tessera;
using namespace tessera::test;

namespace {

constexpr std::int64_t kN = 8;

// acc (a tile) and count (a scalar) carried through `for iv in range(lb, ub, step)`:
//   acc += x * float(iv); count += 1
std::unique_ptr<ir::Module> accumulate_loop() {
  KernelBuilder k("loop");
  Value* x = k.arg(Type::pointer(DType::F32), "x");
  Value* out = k.arg(Type::pointer(DType::F32), "out");
  Value* count_out = k.arg(Type::pointer(DType::I32), "count");
  Value* lb = k.arg(Type::scalar(DType::I32), "lb");
  Value* ub = k.arg(Type::scalar(DType::I32), "ub");
  Value* step = k.arg(Type::scalar(DType::I32), "step");
  Value* xv = k.load(k.contiguous(x, kN));
  Value* acc0 = k.b.float_constant(DType::F32, 0.0, {kN});
  Value* count0 = k.i32(0);
  ir::Op* loop = k.b.create(OpKind::For, {lb, ub, step, acc0, count0}, {acc0->type, count0->type}, {}, 1);
  ir::Block* body = loop->regions[0]->block.get();
  Value* iv = body->add_arg(Type::scalar(DType::I32), "iv");
  Value* acc = body->add_arg(acc0->type, "acc");
  Value* count = body->add_arg(count0->type, "n");
  k.b.set_block(body);
  Value* ivf = k.splat(k.op(OpKind::Cast, {iv}, Type::scalar(DType::F32)), {kN});
  Value* acc2 = k.binary(OpKind::Add, acc, k.binary(OpKind::Mul, xv, ivf));
  Value* count2 = k.binary(OpKind::Add, count, k.i32(1));
  k.b.create(OpKind::Yield, {acc2, count2}, {});
  k.b.set_block(&k.m->entry());
  k.store(k.contiguous(out, kN), loop->result(0));
  k.store(count_out, loop->result(1));
  k.ret();
  return std::move(k.m);
}

}  // namespace

TEST_CASE("for loop with a carried tile and a carried scalar, positive and negative steps", "[interp][for]") {
  const auto m = accumulate_loop();
  INFO("seed " << kSeed);
  std::mt19937 rng(kSeed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> x(kN);
  for (auto& v : x) v = dist(rng);
  for (auto [lb, ub, step] : {std::tuple{0, 5, 1}, std::tuple{10, 0, -3}, std::tuple{5, 5, 1}, std::tuple{0, 7, 2},
                              std::tuple{-4, -20, -5}, std::tuple{3, 1, 1}}) {
    INFO("lb " << lb << ", ub " << ub << ", step " << step);
    std::vector<float> out(kN, -1.f), want(kN, 0.f);
    std::vector<std::int32_t> count{-1};
    int want_count = 0;
    for (int iv = lb; step > 0 ? iv < ub : iv > ub; iv += step) {
      for (std::int64_t i = 0; i < kN; ++i) want[i] = want[i] + x[i] * static_cast<float>(iv);
      ++want_count;
    }
    std::vector<ArgValue> args{buffer_arg(x, DType::F32), buffer_arg(out, DType::F32), buffer_arg(count, DType::I32),
                               ArgValue::integer(lb, DType::I32), ArgValue::integer(ub, DType::I32),
                               ArgValue::integer(step, DType::I32)};
    interp::run(*m, {1, 1, 1}, args);
    CHECK(count[0] == want_count);
    CHECK(out == want);
  }
}

TEST_CASE("a for loop with step 0 that would run is a ProgramError", "[interp][for]") {
  const auto m = accumulate_loop();
  std::vector<float> x(kN), out(kN);
  std::vector<std::int32_t> count(1);
  std::vector<ArgValue> args{buffer_arg(x, DType::F32), buffer_arg(out, DType::F32), buffer_arg(count, DType::I32),
                             ArgValue::integer(5, DType::I32), ArgValue::integer(0, DType::I32),
                             ArgValue::integer(0, DType::I32)};
  CHECK_THROWS_AS(interp::run(*m, {1, 1, 1}, args), ProgramError);
  // Also where the bounds would run no iteration for a negative step: 0 is never a valid step.
  args[3] = ArgValue::integer(0, DType::I32);
  args[4] = ArgValue::integer(5, DType::I32);
  CHECK_THROWS_WITH(interp::run(*m, {1, 1, 1}, args), Catch::Contains("step 0"));
}

TEST_CASE("a loop counter that would wrap past the end of i32 ends the loop instead", "[interp][for]") {
  // Before: MAX - 3 + 7 wrapped to a negative number, below ub again, and the loop never ended.
  const auto m = accumulate_loop();
  constexpr std::int32_t kMax = INT32_MAX, kMin = INT32_MIN;
  for (auto [lb, ub, step, trips] : {std::tuple{kMax - 10, kMax, 7, 2}, std::tuple{kMin + 10, kMin, -7, 2},
                                     std::tuple{0, kMax, 1 << 30, 2}, std::tuple{kMax - 1, kMax, kMax, 1}}) {
    INFO("lb " << lb << ", ub " << ub << ", step " << step);
    std::vector<float> x(kN, 0.f), out(kN);
    std::vector<std::int32_t> count{-1};
    std::vector<ArgValue> args{buffer_arg(x, DType::F32), buffer_arg(out, DType::F32), buffer_arg(count, DType::I32),
                               ArgValue::integer(lb, DType::I32), ArgValue::integer(ub, DType::I32),
                               ArgValue::integer(step, DType::I32)};
    interp::run(*m, {1, 1, 1}, args);
    CHECK(count[0] == trips);
  }
}

TEST_CASE("if with a result, per program, over a 2-D grid", "[interp][if]") {
  // out[(pid1 * P0 + pid0) * 4 + i] = pid0 < num_programs(0) / 2 ? 10 * pid0 + pid1 : -pid0
  KernelBuilder k("branch");
  Value* out = k.arg(Type::pointer(DType::I32), "out");
  Value* pid0 = k.program_id(0);
  Value* pid1 = k.program_id(1);
  Value* nprog = k.op(OpKind::NumPrograms, {}, Type::scalar(DType::I32), {{"axis", std::int64_t{0}}});
  Value* cond = k.compare(OpKind::CmpLt, pid0, k.binary(OpKind::Div, nprog, k.i32(2)));
  ir::Op* branch = k.b.create(OpKind::If, {cond}, {tile_of(DType::I32, {4})}, {}, 2);
  k.b.set_block(branch->regions[0]->block.get());
  k.b.create(OpKind::Yield, {k.splat(k.binary(OpKind::Add, k.binary(OpKind::Mul, pid0, k.i32(10)), pid1), {4})}, {});
  k.b.set_block(branch->regions[1]->block.get());
  k.b.create(OpKind::Yield, {k.splat(k.op(OpKind::Neg, {pid0}, pid0->type), {4})}, {});
  k.b.set_block(&k.m->entry());
  Value* linear = k.binary(OpKind::Add, k.binary(OpKind::Mul, pid1, nprog), pid0);
  Value* offs = k.binary(OpKind::Add, k.splat(k.binary(OpKind::Mul, linear, k.i32(4)), {4}), k.arange(4));
  k.store(k.addptr(k.splat(out, {4}), offs), branch->result());
  k.ret();

  const int p0 = 5, p1 = 3;
  std::vector<std::int32_t> result(p0 * p1 * 4, 999);
  std::vector<ArgValue> args{buffer_arg(result, DType::I32)};
  interp::run(*k.m, {p0, p1, 1}, args);
  for (int b = 0; b < p1; ++b)
    for (int a = 0; a < p0; ++a)
      for (int i = 0; i < 4; ++i) {
        INFO("program (" << a << ", " << b << ") lane " << i);
        REQUIRE(result[(b * p0 + a) * 4 + i] == (a < p0 / 2 ? 10 * a + b : -a));
      }
}

TEST_CASE("select picks per lane", "[interp][select]") {
  KernelBuilder k("select");
  Value* a = k.arg(Type::pointer(DType::I32), "a");
  Value* out = k.arg(Type::pointer(DType::I32), "out");
  Value* av = k.load(k.contiguous(a, 16));
  Value* cond = k.compare(OpKind::CmpGt, av, k.b.int_constant(DType::I32, 0, {16}));
  Value* neg = k.op(OpKind::Neg, {av}, av->type);
  k.store(k.contiguous(out, 16), k.op(OpKind::Select, {cond, av, neg}, av->type));
  k.ret();
  std::vector<std::int32_t> in(16), res(16);
  for (int i = 0; i < 16; ++i) in[i] = (i % 3 == 0 ? -1 : 1) * i * 7;
  std::vector<ArgValue> args{buffer_arg(in, DType::I32), buffer_arg(res, DType::I32)};
  interp::run(*k.m, {1, 1, 1}, args);
  for (int i = 0; i < 16; ++i) REQUIRE(res[i] == std::abs(in[i]));
}

// Tracing whole kernels: the IR of DESIGN.md's vector add, a 2-D kernel built with .col()/.row(),
// and both run on the interpreter against plain C++.
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "dsl_test_util.hpp"

using namespace dsl_test;
using ir::OpKind;

namespace {

auto make_add() {
  return ts::kernel("add", [](ts::Ptr<float> x, ts::Ptr<float> y, ts::Ptr<float> out, ts::Int n) {
    const int BLOCK = ts::meta("BLOCK");
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    ts::store(out + offs, ts::load(x + offs, mask) + ts::load(y + offs, mask), mask);
  });
}

}  // namespace

TEST_CASE("vector add traces to the expected ops", "[dsl][trace]") {
  auto add = make_add();
  REQUIRE(add.def().args.size() == 4);
  CHECK(add.def().args[0].dtype == ts::DType::Ptr);
  CHECK(add.def().args[0].pointee == ts::DType::F32);
  CHECK(add.def().args[3].dtype == ts::DType::I32);

  auto m = trace(add, {{"BLOCK", 128}});
  CHECK(m->name == "add");
  CHECK(m->num_warps == 4);
  CHECK(m->arg_facts.size() == 4);
  ir::Block& b = m->entry();
  REQUIRE(b.args.size() == 4);
  CHECK(b.args[0]->name_hint == "arg0");
  CHECK(type_of(b.args[0].get()) == "ptr<f32>");

  const std::vector<OpKind> expected{
      OpKind::ProgramId, OpKind::Constant, OpKind::Mul, OpKind::Arange, OpKind::Splat, OpKind::Add,  // offs
      OpKind::Splat, OpKind::CmpLt,                                                                  // mask
      OpKind::Splat, OpKind::AddPtr,                                                                 // out + offs
      OpKind::Splat, OpKind::AddPtr, OpKind::Load, OpKind::Splat, OpKind::AddPtr, OpKind::Load,      // loads
      OpKind::Add, OpKind::Store, OpKind::Return};
  // C++ leaves the evaluation order of an operator's operands unspecified (g++ goes right to
  // left), so the ops are compared as a multiset; only the last two are fixed.
  auto got = kinds(b);
  CHECK(got.back() == OpKind::Return);
  CHECK(got[got.size() - 2] == OpKind::Store);
  auto sorted_expected = expected;
  std::sort(got.begin(), got.end());
  std::sort(sorted_expected.begin(), sorted_expected.end());
  CHECK(got == sorted_expected);

  ir::Op* load = first_op(b, OpKind::Load);
  CHECK(type_of(load->result()) == "<128xf32>");
  CHECK(type_of(load->operands[0]) == "<128xptr<f32>>");
  CHECK(type_of(load->operands[1]) == "<128xi1>");
  CHECK(first_op(b, OpKind::Arange)->int_attr("end") == 128);
  CHECK(first_op(b, OpKind::Constant)->int_attr("value") == 128);
  // Ops carry the user's line: this file.
  CHECK(load->loc.file.find("dsl_trace_test.cpp") != std::string::npos);
  CHECK(load->loc.line > 0);

  const std::string text = ir::print(*m, {.locations = false});
  INFO(text);
  CHECK(text.find("kernel @add(") != std::string::npos);
  CHECK(text.find("arange") != std::string::npos);
  CHECK(text.find("<128xptr<f32>>") != std::string::npos);
}

TEST_CASE("vector add runs on the interpreter", "[dsl][trace][interp]") {
  auto add = make_add();
  const int n = 1000;
  std::vector<float> x(n), y(n), out(n, -1.f);
  for (int i = 0; i < n; ++i) x[i] = 0.5f * i, y[i] = 1000.f - i;
  run(add, {{"BLOCK", 256}}, {ts::cdiv(n, 256), 1, 1}, x, y, out, n);
  for (int i = 0; i < n; ++i) REQUIRE(out[i] == x[i] + y[i]);
}

namespace {

// out[m, n] = a[m] * 10 + b[n] over an M x N matrix, with row-major strides and edge masks.
auto make_outer() {
  return ts::kernel("outer", [](ts::Ptr<float> a, ts::Ptr<float> b, ts::Ptr<float> out, ts::Int M, ts::Int N) {
    const auto BM = ts::meta("BM"), BN = ts::meta("BN");
    auto rm = ts::program_id(0) * BM + ts::arange(0, BM);
    auto rn = ts::program_id(1) * BN + ts::arange(0, BN);
    auto va = ts::load(a + rm, rm < M);
    auto vb = ts::load(b + rn, rn < N);
    auto value = va.col() * 10 + vb.row();                       // <BM x 1> with <1 x BN>
    auto mask = (rm.col() < M) && (rn.row() < N);
    ts::store(out + rm.col() * N + rn.row(), value, mask);
  });
}

}  // namespace

TEST_CASE("2-D kernel broadcasts .col() against .row()", "[dsl][trace]") {
  auto outer = make_outer();
  auto m = trace(outer, {{"BM", 16}, {"BN", 32}});
  ir::Block& b = m->entry();
  ir::Op* store = first_op(b, OpKind::Store);
  REQUIRE(store != nullptr);
  CHECK(type_of(store->operands[0]) == "<16x32xptr<f32>>");
  CHECK(type_of(store->operands[1]) == "<16x32xf32>");
  CHECK(type_of(store->operands[2]) == "<16x32xi1>");
  int cols = 0, rows = 0;
  ir::walk(b, [&](ir::Op& op) {
    if (op.kind != OpKind::ExpandDims) return;
    const std::string t = type_of(op.result());
    if (op.int_attr("axis") == 1) cols += t == "<16x1xf32>" || t == "<16x1xi32>";
    if (op.int_attr("axis") == 0) rows += t == "<1x32xf32>" || t == "<1x32xi32>";
  });
  CHECK(cols == 3);  // va.col(), rm.col() twice
  CHECK(rows == 3);
  CHECK(count_ops(b, OpKind::Broadcast) >= 2);
}

TEST_CASE("2-D kernel runs on the interpreter", "[dsl][trace][interp]") {
  auto outer = make_outer();
  const int M = 37, N = 45;
  std::vector<float> a(M), b(N), out(M * N, -1.f);
  std::iota(a.begin(), a.end(), 1.f);
  std::iota(b.begin(), b.end(), 0.25f);
  run(outer, {{"BM", 16}, {"BN", 32}}, {ts::cdiv(M, 16), ts::cdiv(N, 32), 1}, a, b, out, M, N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) REQUIRE(out[i * N + j] == a[i] * 10 + b[j]);
}

TEST_CASE("plain C++ control flow over meta-parameters unrolls the trace", "[dsl][trace]") {
  auto k = ts::kernel("unrolled", [](ts::Ptr<std::int32_t> out) {
    const auto R = ts::meta("REPEAT");
    auto v = ts::arange(0, 8);
    for (int r = 0; r < R; ++r) v = v + 1;
    if (ts::meta("NEGATE")) v = -v;
    ts::store(out + ts::arange(0, 8), v);
  });
  auto m = trace(k, {{"REPEAT", 3}, {"NEGATE", 1}});
  CHECK(count_ops(m->entry(), OpKind::Add) == 3);
  CHECK(count_ops(m->entry(), OpKind::Neg) == 1);
  std::vector<std::int32_t> out(8);
  run(k, {{"REPEAT", 3}, {"NEGATE", 1}}, {1, 1, 1}, out);
  for (int i = 0; i < 8; ++i) CHECK(out[i] == -(i + 3));
}

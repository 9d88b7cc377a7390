// The DSL's shape ops: tile.reshape / ts::reshape, ts::trans, ts::permute, ts::join, ts::split.
// Their IR types, their errors (ProgramError naming the user's line), and kernels run on the
// interpreter against plain C++.
#include <array>
#include <random>
#include <string>

#include "dsl_test_util.hpp"

using namespace dsl_test;
using Catch::Contains;
using ir::OpKind;

namespace {

std::string at_line(int line) { return "dsl_shape_ops_test.cpp:" + std::to_string(line) + ":"; }

template <class K>
std::string trace_error(K& k, const ts::MetaValues& meta = {}) {
  try {
    trace(k, meta);
  } catch (const ts::ProgramError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("shape ops trace to reshape, trans, join and split with their types", "[dsl][shape]") {
  auto k = ts::kernel("shapes", [](ts::Ptr<float> x, ts::Ptr<float> out) {
    auto offs = ts::arange(0, 32);
    auto v = ts::load(x + offs);
    auto m = v.reshape({4, 8});                 // <4x8>
    auto t = ts::trans(m);                      // <8x4>
    auto p = ts::permute(ts::reshape(t, {2, 4, 4}), {2, 0, 1});  // <4x2x4>
    auto j = ts::join(p, p * 2.0f);             // <4x2x4x2>
    auto [lo, hi] = ts::split(j);               // two <4x2x4>
    ts::store(out + offs, (lo + hi).reshape({32}));
  });
  auto mod = trace(k);
  ir::Block& b = mod->entry();
  CHECK(count_ops(b, OpKind::Reshape) == 3);
  CHECK(count_ops(b, OpKind::Trans) == 2);
  ir::Op* t = first_op(b, OpKind::Trans);
  CHECK(type_of(t->operands[0]) == "<4x8xf32>");
  CHECK(type_of(t->result()) == "<8x4xf32>");
  CHECK(std::get<std::vector<std::int64_t>>(t->attrs.at("order")) == std::vector<std::int64_t>{1, 0});
  ir::Op* j = first_op(b, OpKind::Join);
  CHECK(type_of(j->operands[0]) == "<4x2x4xf32>");
  CHECK(type_of(j->result()) == "<4x2x4x2xf32>");
  ir::Op* s = first_op(b, OpKind::Split);
  REQUIRE(s->results.size() == 2);
  CHECK(type_of(s->result(0)) == "<4x2x4xf32>");
  CHECK(type_of(s->result(1)) == "<4x2x4xf32>");
}

namespace {

// The line a `bad` body last noted (a kernel function captures nothing, so not a local).
int g_line = 0;

// Traces a kernel that applies `Body`, a captureless lambda type, to a loaded <16xf32> tile.
template <class Body>
std::string bad(Body) {
  auto k = ts::kernel("bad", [](ts::Ptr<float> x) { Body{}(ts::load(x + ts::arange(0, 16))); });
  return trace_error(k);
}

}  // namespace

TEST_CASE("shape op errors name the problem and the user's line", "[dsl][shape][errors]") {
  std::string msg = bad([](ts::Float v) { g_line = __LINE__; v.reshape({4, 8}); });
  CHECK_THAT(msg, Contains("reshape of <16> (16 elements) to <4x8> (32 elements)") && Contains(at_line(g_line)));
  msg = bad([](ts::Float v) { g_line = __LINE__; ts::reshape(v, {3, 5}); });
  CHECK_THAT(msg, Contains("power of two") && Contains(at_line(g_line)));
  msg = bad([](ts::Float v) { g_line = __LINE__; ts::trans(v); });
  CHECK_THAT(msg, Contains("trans of <16>: needs a 2-D tile") && Contains(at_line(g_line)));
  msg = bad([](ts::Float v) { g_line = __LINE__; ts::permute(v.reshape({4, 4}), {1, 1}); });
  CHECK_THAT(msg, Contains("not a permutation of 0..1") && Contains(at_line(g_line)));
  msg = bad([](ts::Float v) { g_line = __LINE__; ts::join(v, v.reshape({4, 4})); });
  CHECK_THAT(msg, Contains("join of <16> and <4x4>: both tiles must have the same shape") && Contains(at_line(g_line)));
  msg = bad([](ts::Float v) { g_line = __LINE__; ts::split(v.reshape({4, 4})); });
  CHECK_THAT(msg, Contains("split of <4x4>: the last dimension must be 2") && Contains(at_line(g_line)));
  msg = bad([](ts::Float v) { g_line = __LINE__; ts::split(ts::full<float>({}, 1.0f)); (void)v; });
  CHECK_THAT(msg, Contains("split: needs a tile, got a scalar") && Contains(at_line(g_line)));
}

TEST_CASE("a transpose kernel runs on the interpreter", "[dsl][shape]") {
  // out (C x R) = x^T for x (R x C), by BR x BC tiles; the mask is transposed with the data.
  auto k = ts::kernel("transpose", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int R, ts::Int C) {
    const int BR = ts::meta("BR"), BC = ts::meta("BC");
    auto rows = ts::program_id(0) * BR + ts::arange(0, BR);
    auto cols = ts::program_id(1) * BC + ts::arange(0, BC);
    auto mask = (rows.col() < R) && (cols.row() < C);
    auto tile = ts::load(x + rows.col() * C + cols.row(), mask);
    ts::store(out + cols.col() * R + rows.row(), ts::trans(tile), ts::trans(mask));
  });
  std::mt19937 rng(20261203);
  std::uniform_real_distribution<float> dist(-10.f, 10.f);
  for (auto [r, c, br, bc] : {std::array{37, 70, 16, 32}, std::array{1, 50, 1, 64}, std::array{50, 1, 64, 1},
                              std::array{8, 8, 8, 8}}) {
    INFO(r << "x" << c << " by " << br << "x" << bc);
    std::vector<float> x(r * c), out(c * r, -1.f);
    for (auto& v : x) v = dist(rng);
    const ts::Dim3 grid{static_cast<std::uint32_t>((r + br - 1) / br), static_cast<std::uint32_t>((c + bc - 1) / bc), 1};
    run(k, {{"BR", br}, {"BC", bc}}, grid, x, out, r, c);
    for (int i = 0; i < r; ++i)
      for (int j = 0; j < c; ++j) REQUIRE(out[j * r + i] == x[i * c + j]);
  }
}

TEST_CASE("join and split run on the interpreter, on tiles and on scalars", "[dsl][shape]") {
  auto k = ts::kernel("join_split", [](ts::Ptr<std::int32_t> a, ts::Ptr<std::int32_t> b, ts::Ptr<std::int32_t> pairs,
                                       ts::Ptr<std::int32_t> ab, ts::Ptr<std::int32_t> lo, ts::Ptr<std::int32_t> hi, ts::Int n) {
    const int BLOCK = ts::meta("BLOCK");
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto pair_offs = offs.col() * 2 + ts::arange(0, 2).row();  // <BLOCK x 2>
    auto pair_mask = pair_offs < n * 2;
    ts::store(ab + pair_offs, ts::join(ts::load(a + offs, mask), ts::load(b + offs, mask)), pair_mask);
    auto [l, h] = ts::split(ts::load(pairs + pair_offs, pair_mask));
    ts::store(lo + offs, l, mask);
    ts::store(hi + offs, h, mask);
  });
  const int n = 77, block = 32;
  std::vector<std::int32_t> a(n), b(n), pairs(2 * n), ab(2 * n, -1), lo(n, -1), hi(n, -1);
  for (int i = 0; i < n; ++i) a[i] = i * 3, b[i] = -i, pairs[2 * i] = 1000 + i, pairs[2 * i + 1] = 2000 + i;
  run(k, {{"BLOCK", block}}, {3, 1, 1}, a, b, pairs, ab, lo, hi, n);
  for (int i = 0; i < n; ++i) {
    CHECK(ab[2 * i] == a[i]);
    CHECK(ab[2 * i + 1] == b[i]);
    CHECK(lo[i] == 1000 + i);
    CHECK(hi[i] == 2000 + i);
  }

  auto s = ts::kernel("scalar_pair", [](ts::Ptr<float> x, ts::Ptr<float> out) {
    auto two = ts::arange(0, 2);
    auto [first, second] = ts::split(ts::load(x + two));  // <2> -> two scalars
    ts::store(out + two, ts::join(second, first));          // two scalars -> <2>
  });
  auto mod = trace(s);
  CHECK(type_of(first_op(mod->entry(), OpKind::Split)->result(0)) == "f32");
  CHECK(type_of(first_op(mod->entry(), OpKind::Join)->result()) == "<2xf32>");
  std::vector<float> x{1.5f, -2.5f}, out(2, 0.f);
  run(s, {}, {1, 1, 1}, x, out);
  CHECK(out == std::vector<float>{-2.5f, 1.5f});
}

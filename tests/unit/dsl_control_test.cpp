// for_range, while_ and if_: which outer variables become loop-carried values or if results, and that
// the C++ variables hold the op's results afterwards.
#include <cstdint>

#include "dsl_test_util.hpp"

using namespace dsl_test;
using ir::OpKind;

namespace {

// Sums K rows of a K x BLOCK matrix (acc), and counts iterations in a scalar (count); `base` and
// `scale` are read in the body but never reassigned, so they must not be carried.
auto make_row_sum() {
  return ts::kernel("row_sum", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Ptr<std::int32_t> iters, ts::Int K) {
    const int BLOCK = ts::meta("BLOCK");
    auto cols = ts::arange(0, BLOCK);
    auto scale = ts::full<float>({}, 2.0f);
    auto acc = ts::zeros<float>({BLOCK});
    auto count = ts::zeros<std::int32_t>({});
    ts::for_range(0, K, 1, [&](ts::Int k) {
      auto row = ts::load(x + k * BLOCK + cols);
      acc = acc + row * scale;
      count = count + 1;
    });
    ts::store(out + cols, acc);
    ts::store(iters, count);
  });
}

}  // namespace

TEST_CASE("for_range carries exactly the reassigned variables", "[dsl][control]") {
  auto k = make_row_sum();
  auto m = trace(k, {{"BLOCK", 8}});
  ir::Op* loop = first_op(m->entry(), OpKind::For);
  REQUIRE(loop != nullptr);
  INFO(ir::print(*m));
  REQUIRE(loop->results.size() == 2);                   // acc and count; not cols, scale, x
  CHECK(loop->operands.size() == 5);                    // lb, ub, step, two inits
  ir::Block& body = *loop->regions[0]->block;
  REQUIRE(body.args.size() == 3);                       // iv, acc, count
  CHECK(type_of(body.args[0].get()) == "i32");
  CHECK(type_of(body.args[1].get()) == "<8xf32>");
  CHECK(type_of(body.args[2].get()) == "i32");
  CHECK(type_of(loop->result(0)) == "<8xf32>");
  CHECK(type_of(loop->result(1)) == "i32");
  ir::Op* yield = body.terminator();
  REQUIRE(yield->kind == OpKind::Yield);
  CHECK(yield->operands.size() == 2);
  // After the loop, the C++ variables are the loop's results: the stores use them.
  ir::Op* store_acc = nullptr;
  ir::Op* store_count = nullptr;
  for (auto& op : m->entry().ops)
    if (op->kind == OpKind::Store) (op->operands[1]->type.is_tile() ? store_acc : store_count) = op.get();
  REQUIRE(store_acc != nullptr);
  REQUIRE(store_count != nullptr);
  CHECK(store_acc->operands[1] == loop->result(0));
  CHECK(store_count->operands[1] == loop->result(1));
}

TEST_CASE("for_range runs on the interpreter", "[dsl][control][interp]") {
  auto k = make_row_sum();
  const int K = 5, B = 8;
  std::vector<float> x(K * B), out(B);
  for (int i = 0; i < K * B; ++i) x[i] = static_cast<float>(i);
  std::vector<std::int32_t> iters(1, -1);
  run(k, {{"BLOCK", B}}, {1, 1, 1}, x, out, iters, K);
  for (int j = 0; j < B; ++j) {
    float expect = 0;
    for (int r = 0; r < K; ++r) expect += x[r * B + j] * 2.0f;
    CHECK(out[j] == expect);
  }
  CHECK(iters[0] == K);
}

TEST_CASE("nested for_range carries through both loops", "[dsl][control]") {
  auto k = ts::kernel("nested", [](ts::Ptr<std::int32_t> out, ts::Int n) {
    auto total = ts::zeros<std::int32_t>({});
    ts::for_range(0, n, [&](ts::Int i) {
      ts::for_range(0, i, [&] { total = total + 1; });
    });
    ts::store(out, total);
  });
  auto m = trace(k);
  ir::Op* outer = first_op(m->entry(), OpKind::For);
  REQUIRE(outer->results.size() == 1);
  ir::Op* inner = first_op(*outer->regions[0]->block, OpKind::For);
  REQUIRE(inner != outer);
  CHECK(inner->results.size() == 1);
  CHECK(inner->operands[3] == outer->regions[0]->block->args[1].get());  // inner init: outer's carried arg
  std::vector<std::int32_t> out(1);
  run(k, {}, {1, 1, 1}, out, 6);
  CHECK(out[0] == 15);  // 0 + 1 + ... + 5
}

TEST_CASE("if_ yields a variable assigned in one branch only", "[dsl][control]") {
  auto k = ts::kernel("branch", [](ts::Ptr<float> out, ts::Int flag) {
    auto offs = ts::arange(0, 4);
    auto v = ts::full<float>({4}, 1.0f);
    auto w = ts::full<float>({4}, 5.0f);
    ts::if_(flag > 0, [&] { v = v * 3; });
    ts::if_(flag > 1, [&] { w = w + v; }, [&] { v = -v; });
    ts::store(out + offs, v + w * 100);
  });
  auto m = trace(k);
  INFO(ir::print(*m));
  std::vector<ir::Op*> ifs;
  for (auto& op : m->entry().ops)
    if (op->kind == OpKind::If) ifs.push_back(op.get());
  REQUIRE(ifs.size() == 2);
  REQUIRE(ifs[0]->results.size() == 1);  // v
  ir::Op* else_yield = ifs[0]->regions[1]->block->terminator();
  REQUIRE(else_yield->operands.size() == 1);
  CHECK(else_yield->operands[0]->def->kind == OpKind::Constant);  // the value before the if_
  CHECK(ifs[1]->results.size() == 2);  // w (then) and v (else)

  for (int flag : {0, 1, 2}) {
    std::vector<float> out(4);
    run(k, {}, {1, 1, 1}, out, flag);
    const float v = flag > 0 ? 3.f : 1.f;
    const float expect = flag > 1 ? v + (5 + v) * 100 : -v + 5 * 100;
    CHECK(out[0] == expect);
  }
}

TEST_CASE("while_ is a do_while whose body runs under its condition", "[dsl][control]") {
  auto k = ts::kernel("search", [](ts::Ptr<std::int32_t> keys, ts::Ptr<std::int32_t> out, ts::Int key, ts::Int n) {
    ts::Int lo = ts::zeros<std::int32_t>({}), hi = n;
    auto steps = ts::zeros<std::int32_t>({});
    ts::while_([&] { return lo < hi; }, [&] {
      auto mid = (lo + hi) / 2;
      ts::if_(ts::load(keys + mid) < key, [&] { lo = mid + 1; }, [&] { hi = mid; });
      steps = steps + 1;
    });
    ts::store(out, lo);
    ts::store(out + 1, steps);
  });
  auto m = trace(k);
  INFO(ir::print(*m));
  ir::Op* loop = first_op(m->entry(), OpKind::DoWhile);
  REQUIRE(loop != nullptr);
  REQUIRE(loop->results.size() == 3);  // lo, hi, steps; not key, n, keys
  CHECK(loop->operands.size() == 3);
  ir::Block& body = *loop->regions[0]->block;
  CHECK(body.args.size() == 3);
  ir::Op* yield = body.terminator();
  REQUIRE(yield->operands.size() == 4);  // the condition, then the carried values
  CHECK(type_of(yield->operands[0]) == "i1");
  // The body runs under an if on that condition.
  ir::Op* guard = first_op(body, OpKind::If);
  REQUIRE(guard != nullptr);
  CHECK(guard->operands[0] == yield->operands[0]);

  std::vector<std::int32_t> keys;
  for (int i = 0; i < 100; ++i) keys.push_back(2 * i);
  for (std::int32_t key : {-5, 0, 1, 77, 198, 500}) {
    std::vector<std::int32_t> out(2, -1);
    run(k, {}, {1, 1, 1}, keys, out, key, 100);
    std::int32_t want = 0;
    while (want < 100 && keys[static_cast<std::size_t>(want)] < key) ++want;
    CHECK(out[0] == want);
    CHECK(out[1] >= 6);  // ceil(log2(101)) halvings of [0, 100)
    CHECK(out[1] <= 7);
  }
}

TEST_CASE("LoopOptions marks the for for the pipeline pass, and a depth out of range names the line",
          "[dsl][control][errors]") {
  auto k = ts::kernel("marked_rows", [](ts::Ptr<float> x, ts::Ptr<float> y, ts::Int m) {
    auto cols = ts::arange(0, 16);
    ts::for_range(ts::program_id(0), m, ts::num_programs(0), [&](ts::Int row) {  // the line named
      ts::store(y + row * 16 + cols, ts::load(x + row * 16 + cols) * 2.0f);
    }, ts::LoopOptions{.num_stages = static_cast<int>(ts::meta("S"))});
  });
  const int line = __LINE__ - 4;
  auto m = trace(k, {{"S", 3}});
  const ir::Op* loop = first_op(m->entry(), OpKind::For);
  REQUIRE(loop != nullptr);
  CHECK(loop->int_attr("num_stages") == 3);
  CHECK(first_op(trace(k, {{"S", 0}})->entry(), OpKind::For)->attrs.count("num_stages") == 0);  // the default
  for (int bad : {-1, 9})
    CHECK_THROWS_WITH(trace(k, {{"S", bad}}), Catch::Contains("LoopOptions::num_stages is " + std::to_string(bad)) &&
                                                  Catch::Contains("dsl_control_test.cpp:" + std::to_string(line)));
  // The marked loop runs on the interpreter as written (the attribute is the pipeline pass's).
  std::vector<float> x(3 * 16), y(3 * 16, -1.0f);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  run(k, {{"S", 3}}, {2, 1, 1}, x, y, 3);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(y[i] == 2.0f * x[i]);
}

TEST_CASE("while_ refuses a condition that is not a scalar, naming the line", "[dsl][control][errors]") {
  auto k = ts::kernel("tile_cond", [](ts::Ptr<std::int32_t> out) {
    auto v = ts::arange(0, 16);
    ts::while_([&] { return v < 8; }, [&] { v = v + 1; });  // the line named
    ts::store(out + ts::arange(0, 16), v);
  });
  CHECK_THROWS_WITH(trace(k), Catch::Contains("while_ needs a scalar condition") &&
                                  Catch::Contains("dsl_control_test.cpp:" + std::to_string(__LINE__ - 4)));
}

TEST_CASE("a tile defined inside a body cannot escape it", "[dsl][control][errors]") {
  auto k = ts::kernel("escape", [](ts::Ptr<std::int32_t> out, ts::Int n) {
    std::vector<ts::Int> stash;
    ts::for_range(0, n, [&](ts::Int i) { stash.push_back(i * 2); });
    ts::store(out, stash.front());
  });
  CHECK_THROWS_WITH(trace(k), Catch::Contains("used after that body ended"));
}

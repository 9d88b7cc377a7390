// Trace-time errors: each is a ProgramError whose message names the user's file and line.
#include <string>

#include "dsl_test_util.hpp"

using namespace dsl_test;
using Catch::Contains;

namespace {

// "this file:line:" — where the DSL call on line `line` of this file was written. Kernels note
// `line` in a static variable: a kernel function captures nothing.
std::string at_line(int line) { return "dsl_errors_test.cpp:" + std::to_string(line) + ":"; }

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

TEST_CASE("arange of a size that is not a power of two", "[dsl][errors]") {
  static int line = 0;
  auto k = ts::kernel("bad_arange", [](ts::Ptr<float> x) {
    line = __LINE__; auto offs = ts::arange(0, ts::meta("N"));
    ts::store(x + offs, 1.0f);
  });
  const std::string msg = trace_error(k, {{"N", 100}});
  CHECK_THAT(msg, Contains("arange(0, 100)") && Contains("power of two") && Contains(at_line(line)));
  CHECK_NOTHROW(trace(k, {{"N", 128}}));
}

TEST_CASE("shape mismatch names the operator, both shapes and the line", "[dsl][errors]") {
  static int line = 0;
  auto k = ts::kernel("bad_shapes", [](ts::Ptr<float> x) {
    auto a = ts::arange(0, 128);
    auto b = ts::arange(0, 64);
    line = __LINE__; auto c = a + b;
    ts::store(x + c, 0.0f);
  });
  const std::string msg = trace_error(k);
  CHECK_THAT(msg, Contains("shape mismatch in '+': <128> vs <64>") && Contains(at_line(line)));
}

TEST_CASE("rank mismatch asks for expand_dims", "[dsl][errors]") {
  static int line = 0;
  auto k = ts::kernel("bad_rank", [](ts::Ptr<float> x) {
    auto a = ts::arange(0, 16);
    line = __LINE__; auto mask = a.col() < a;
    ts::store(x + a, 0.0f, mask);
  });
  const std::string msg = trace_error(k);  // before at_line(line) below reads `line`
  CHECK_THAT(msg, Contains("<16x1> vs <16>") && Contains("expand_dims") && Contains(at_line(line)));
}

TEST_CASE("unknown meta-parameter lists those given", "[dsl][errors]") {
  static int line = 0;
  auto k = ts::kernel("bad_meta", [](ts::Ptr<float> x) {
    line = __LINE__; const auto block = ts::meta("BLOCK_SIZE");
    ts::store(x + ts::arange(0, block), 0.0f);
  });
  const std::string msg = trace_error(k, {{"BLOCK", 64}, {"num_stages_hint", 2}});
  CHECK_THAT(msg, Contains("'BLOCK_SIZE'") && Contains("BLOCK, num_stages_hint") && Contains(at_line(line)));
  CHECK_THAT(trace_error(k), Contains("none"));
}

TEST_CASE("DSL ops outside a kernel trace", "[dsl][errors]") {
  const int line = __LINE__; CHECK_THROWS_WITH(ts::arange(0, 16), Contains("only be used inside a kernel being traced") && Contains(at_line(line)));
  CHECK_THROWS_AS(ts::program_id(0), ts::ProgramError);
  CHECK_THROWS_AS(ts::meta("BLOCK"), ts::ProgramError);
  // cdiv on C++ integers is a host helper, fine anywhere (and constexpr).
  static_assert(ts::cdiv(1000, 256) == 4);
}

TEST_CASE("a loop-carried variable must keep its shape", "[dsl][errors]") {
  static int line = 0;
  auto k = ts::kernel("bad_carry", [](ts::Ptr<std::int32_t> x, ts::Int n) {
    auto v = ts::arange(0, 16);
    ts::for_range(0, n, [&] {
      line = __LINE__; v = ts::arange(0, 32);
    });
    ts::store(x + v, 0);
  });
  const std::string msg = trace_error(k);
  CHECK_THAT(msg, Contains("changes from <16xi32> to <32xi32>") && Contains(at_line(line)));
}

TEST_CASE("other trace-time errors", "[dsl][errors]") {
  auto scalar_if = ts::kernel("tile_cond", [](ts::Ptr<std::int32_t> x) {
    auto offs = ts::arange(0, 8);
    ts::if_(offs < 4, [] {});
    ts::store(x + offs, 0);
  });
  CHECK_THAT(trace_error(scalar_if), Contains("if_ needs a scalar condition"));

  auto bad_axis = ts::kernel("bad_axis", [](ts::Ptr<std::int32_t> x) { ts::store(x, ts::program_id(3)); });
  CHECK_THAT(trace_error(bad_axis), Contains("axis must be 0, 1 or 2"));

  auto too_big = ts::kernel("too_big", [](ts::Ptr<std::int8_t> x) {
    auto v = ts::load(x + ts::arange(0, 4));
    ts::store(x + ts::arange(0, 4), v + 1000);
  });
  CHECK_THAT(trace_error(too_big), Contains("1000 does not fit in i8"));

  auto unset = ts::kernel("unset", [](ts::Ptr<float> x) {
    ts::Float f;
    ts::store(x, f);
  });
  CHECK_THAT(trace_error(unset), Contains("read before anything was assigned"));
}

TEST_CASE("a failed trace leaves no current trace behind", "[dsl][errors]") {
  auto k = ts::kernel("throws", [](ts::Ptr<float> x) { ts::store(x + ts::arange(0, 3), 0.0f); });
  CHECK_THROWS_AS(trace(k), ts::ProgramError);
  CHECK_THROWS_WITH(ts::arange(0, 4), Contains("only be used inside a kernel"));
}

TEST_CASE("dot with mismatched K, a block smaller than the tensor-core tile, or a wrong accumulator", "[dsl][errors][dot]") {
  static int line_k = 0, line_small = 0, line_acc = 0;
  auto mismatched = ts::kernel("dot_bad_k", [](ts::Ptr<ts::half> x, ts::Ptr<float> y) {
    auto a = ts::load(x + ts::arange(0, 32).col() * 32 + ts::arange(0, 32).row());
    auto b = ts::load(x + ts::arange(0, 16).col() * 16 + ts::arange(0, 16).row());
    line_k = __LINE__; auto c = ts::dot(a, b);
    ts::store(y + ts::arange(0, 32).col() * 16 + ts::arange(0, 16).row(), c);
  });
  const std::string k_msg = trace_error(mismatched);
  CHECK_THAT(k_msg, Contains("dot needs a's columns to match b's rows (K): <32x32> times <16x16>") && Contains(at_line(line_k)));
  auto small = ts::kernel("dot_small", [](ts::Ptr<ts::half> x, ts::Ptr<float> y) {
    auto a = ts::load(x + ts::arange(0, 8).col() * 16 + ts::arange(0, 16).row());
    auto b = ts::load(x + ts::arange(0, 16).col() * 16 + ts::arange(0, 16).row());
    line_small = __LINE__; auto c = ts::dot(a, b);
    ts::store(y + ts::arange(0, 8).col() * 16 + ts::arange(0, 16).row(), c);
  });
  const std::string small_msg = trace_error(small);
  CHECK_THAT(small_msg, Contains("dot needs M, N and K of at least 16") && Contains(at_line(line_small)));
  auto bad_acc = ts::kernel("dot_bad_acc", [](ts::Ptr<ts::half> x, ts::Ptr<float> y) {
    auto a = ts::load(x + ts::arange(0, 16).col() * 16 + ts::arange(0, 16).row());
    auto acc = ts::zeros<float>({16, 32});
    line_acc = __LINE__; auto c = ts::dot(a, a, acc);
    ts::store(y + ts::arange(0, 16).col() * 16 + ts::arange(0, 16).row(), c);
  });
  const std::string acc_msg = trace_error(bad_acc);
  CHECK_THAT(acc_msg, Contains("dot's accumulator must be <16x16>, got <16x32>") && Contains(at_line(line_acc)));
}

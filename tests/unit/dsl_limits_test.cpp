// What Triton refuses, refused at trace time with the user's line: a tile stored or masked through
// a scalar pointer, loops whose constant bounds are mistakes (a step of 0, a counter that would
// step past INT32_MAX), tiles of more than 2^20 elements or dims that are not powers of two,
// regions nested more than 512 deep; and a launch that names a meta-parameter twice (LaunchError).
#include <cstdint>
#include <limits>
#include <string>

#include "dsl_test_util.hpp"

using namespace dsl_test;
using Catch::Contains;

namespace {

// Where a kernel's DSL call was written: the kernels below note __LINE__ here (a kernel function
// captures nothing, so not in a local). Each test traces into `msg` before CHECK_THAT, which may
// build its matcher, reading g_line, before it evaluates its argument.
int g_line = 0;
std::string at_line(int line) { return "dsl_limits_test.cpp:" + std::to_string(line) + ":"; }

template <class E, class K>
std::string trace_error(K& k, const ts::MetaValues& meta = {}) {
  try {
    trace(k, meta);
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr std::int32_t kI32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t kI32Min = std::numeric_limits<std::int32_t>::min();

}  // namespace

TEST_CASE("a tile stored through a scalar pointer is refused: every lane would write one address", "[dsl][limits]") {
  std::string msg;
  auto k = ts::kernel("tile_to_scalar", [](ts::Ptr<float> out) {
    auto v = ts::zeros<float>({16});
    g_line = __LINE__; ts::store(out, v);
  });
  msg = trace_error<ts::ProgramError>(k);
  CHECK_THAT(msg, Contains("store of a <16> tile through a scalar pointer") &&
                                                   Contains("every lane would write the one address") &&
                                                   Contains("ts::sum") && Contains(at_line(g_line)));

  auto masked = ts::kernel("tile_mask_store", [](ts::Ptr<float> out) {
    g_line = __LINE__; ts::store(out, 1.0f, ts::arange(0, 8) < 4);
  });
  msg = trace_error<ts::ProgramError>(masked);
  CHECK_THAT(msg,
             Contains("store through a scalar pointer with a <8> mask") && Contains(at_line(g_line)));

  // Scalars through a scalar pointer, and a reduced tile, are fine.
  auto scalar = ts::kernel("scalar_store", [](ts::Ptr<float> out, ts::Ptr<float> x) {
    auto v = ts::load(x + ts::arange(0, 16));
    ts::store(out, ts::sum(v, 0), ts::program_id(0) == 0);
    ts::store(out + 1, ts::load(x, ts::program_id(0) == 0, 2.0f));
  });
  CHECK_NOTHROW(trace(scalar));
}

TEST_CASE("a tile mask or `other` on a scalar pointer's load is refused", "[dsl][limits]") {
  std::string msg;
  auto masked = ts::kernel("tile_mask_load", [](ts::Ptr<float> x, ts::Ptr<float> out) {
    auto offs = ts::arange(0, 8);
    g_line = __LINE__; auto v = ts::load(x, offs < 4);
    ts::store(out + offs, v);
  });
  msg = trace_error<ts::ProgramError>(masked);
  CHECK_THAT(msg,
             Contains("load through a scalar pointer with a <8> mask") && Contains("tile of pointers (p + offsets)") &&
                 Contains(at_line(g_line)));

  auto other = ts::kernel("tile_other_load", [](ts::Ptr<float> x, ts::Ptr<float> out) {
    auto offs = ts::arange(0, 8);
    g_line = __LINE__; auto v = ts::load(x, ts::program_id(0) == 0, ts::zeros<float>({8}));
    ts::store(out + offs, v);
  });
  msg = trace_error<ts::ProgramError>(other);
  CHECK_THAT(msg,
             Contains("load through a scalar pointer with a <8> `other`") && Contains(at_line(g_line)));
}

TEST_CASE("a for_range step of 0 known at trace time is refused", "[dsl][limits]") {
  std::string msg;
  auto k = ts::kernel("step0", [](ts::Ptr<std::int32_t> x, ts::Int n) {
    ts::Int acc = ts::zeros<std::int32_t>({});
    g_line = __LINE__; ts::for_range(0, n, 0, [&] { acc = acc + 1; });
    ts::store(x, acc);
  });
  msg = trace_error<ts::ProgramError>(k);
  CHECK_THAT(msg,
             Contains("for_range(0, ub, 0): the step is 0, so the loop would never end") && Contains(at_line(g_line)));

  // A step that is a constant tile is a constant too.
  auto tile_step = ts::kernel("step0_tile", [](ts::Ptr<std::int32_t> x, ts::Int n) {
    ts::Int acc = ts::zeros<std::int32_t>({});
    const ts::Int step = ts::zeros<std::int32_t>({});
    g_line = __LINE__; ts::for_range(n, 100, step, [&] { acc = acc + 1; });
    ts::store(x, acc);
  });
  msg = trace_error<ts::ProgramError>(tile_step);
  CHECK_THAT(msg,
             Contains("for_range(lb, 100, 0): the step is 0") && Contains(at_line(g_line)));

  // A step known only at run time traces (the runtime reports a 0 there).
  auto runtime_step = ts::kernel("runtime_step", [](ts::Ptr<std::int32_t> x, ts::Int n, ts::Int s) {
    ts::Int acc = ts::zeros<std::int32_t>({});
    ts::for_range(0, n, s, [&] { acc = acc + 1; });
    ts::store(x, acc);
  });
  CHECK_NOTHROW(trace(runtime_step));
}

TEST_CASE("a for_range with constant bounds whose i32 counter would step past INT32_MAX is refused", "[dsl][limits]") {
  std::string msg;
  auto wraps = ts::kernel("wraps", [](ts::Ptr<std::int32_t> x) {
    ts::Int acc = ts::zeros<std::int32_t>({});
    g_line = __LINE__; ts::for_range(0, kI32Max, 1 << 30, [&] { acc = acc + 1; });
    ts::store(x, acc);
  });
  // The counter takes 0 and 2^30; the next step, 2^31, is past INT32_MAX.
  msg = trace_error<ts::ProgramError>(wraps);
  CHECK_THAT(msg, Contains("for_range(0, 2147483647, 1073741824): after its last iteration (i = 1073741824) the i32 "
                           "loop counter would step to 2147483648, past 2147483647") &&
                      Contains(at_line(g_line)));
  auto down = ts::kernel("wraps_down", [](ts::Ptr<std::int32_t> x) {
    ts::Int acc = ts::zeros<std::int32_t>({});
    g_line = __LINE__; ts::for_range(-10, kI32Min, -3, [&] { acc = acc + 1; });
    ts::store(x, acc);
  });
  msg = trace_error<ts::ProgramError>(down);
  CHECK_THAT(msg, Contains("(i = -2147483647) the i32 loop counter would step to -2147483650, past -2147483648") &&
                      Contains(at_line(g_line)));

  // Loops that end: up to INT32_MAX by 1 (the counter stops at INT32_MAX itself), down to
  // INT32_MIN by -2 from an even start, no iteration at all; and a bound known only at run time,
  // which the interpreter (as the GPU) ends where the counter would wrap: from INT32_MAX - 3 by 2
  // it takes INT32_MAX - 3 and INT32_MAX - 1.
  auto ends = ts::kernel("ends", [](ts::Ptr<std::int32_t> x, ts::Int lb) {
    ts::Int acc = ts::zeros<std::int32_t>({});
    ts::for_range(kI32Max - 4, kI32Max, [&] { acc = acc + 1; });
    ts::for_range(kI32Min + 6, kI32Min, -2, [&] { acc = acc + 1; });
    ts::for_range(10, 0, 1 << 30, [&] { acc = acc + 1; });
    ts::for_range(lb, kI32Max, 2, [&] { acc = acc + 100; });
    ts::store(x, acc);
  });
  REQUIRE_NOTHROW(trace(ends));
  std::vector<std::int32_t> out(1, -1);
  run(ends, {}, {1, 1, 1}, out, kI32Max - 3);
  CHECK(out[0] == 4 + 3 + 0 + 200);
}

TEST_CASE("tiles of more than 2^20 elements are refused wherever a shape is made", "[dsl][limits]") {
  std::string msg;
  auto too_long = ts::kernel("too_long", [](ts::Ptr<std::int32_t> x) {
    g_line = __LINE__; auto offs = ts::arange(0, 1 << 21);
    ts::store(x + offs, 0);
  });
  msg = trace_error<ts::ProgramError>(too_long);
  CHECK_THAT(msg,
             Contains("arange(0, 2097152): <2097152> has 2097152 elements, more than the limit of 1048576 (2^20)") && Contains(at_line(g_line)));

  auto full = ts::kernel("too_full", [](ts::Ptr<float> x) {
    g_line = __LINE__; auto t = ts::full<float>({2048, 1024}, 1.0f);
    ts::store(x, ts::sum(ts::sum(t, 1), 0));
  });
  msg = trace_error<ts::ProgramError>(full);
  CHECK_THAT(msg,
             Contains("full: <2048x1024> has 2097152 elements, more than the limit") && Contains(at_line(g_line)));

  // Dims whose product overflows 64 bits are refused, not wrapped to a small count.
  auto huge = ts::kernel("huge", [](ts::Ptr<float> x) {
    g_line = __LINE__; auto t = ts::zeros<float>({std::int64_t{1} << 40, std::int64_t{1} << 40});
    ts::store(x, ts::sum(ts::sum(t, 1), 0));
  });
  msg = trace_error<ts::ProgramError>(huge);
  CHECK_THAT(msg, Contains("has 2^63 or more elements, more than the limit") && Contains(at_line(g_line)));

  // Broadcasting <N x 1> against <1 x M> makes N * M elements.
  auto outer = ts::kernel("outer", [](ts::Ptr<std::int32_t> x) {
    auto a = ts::arange(0, 1024).col();
    auto b = ts::arange(0, 2048).row();
    g_line = __LINE__; auto c = a * b;
    ts::store(x, ts::sum(ts::sum(c, 1), 0));
  });
  msg = trace_error<ts::ProgramError>(outer);
  CHECK_THAT(msg,
             Contains("'*' of <1024x1> and <1x2048>: <1024x2048> has 2097152 elements, more than the limit") &&
                 Contains(at_line(g_line)));

  auto bcast = ts::kernel("bcast", [](ts::Ptr<std::int32_t> x) {
    auto a = ts::arange(0, 1024).col();
    g_line = __LINE__; auto c = a.broadcast_to({1024, 4096});
    ts::store(x, ts::sum(ts::sum(c, 1), 0));
  });
  msg = trace_error<ts::ProgramError>(bcast);
  CHECK_THAT(msg,
             Contains("broadcast_to: <1024x4096> has 4194304 elements") && Contains(at_line(g_line)));

  auto joined = ts::kernel("joined", [](ts::Ptr<float> x) {
    auto a = ts::zeros<float>({1 << 20});
    g_line = __LINE__; auto j = ts::join(a, a);
    ts::store(x, ts::sum(ts::sum(j, 1), 0));
  });
  msg = trace_error<ts::ProgramError>(joined);
  CHECK_THAT(msg,
             Contains("join of two <1048576>: <1048576x2> has 2097152 elements") && Contains(at_line(g_line)));

  // The limit itself is fine.
  auto at_limit = ts::kernel("at_limit", [](ts::Ptr<float> x) {
    auto t = ts::zeros<float>({1024, 1024});
    ts::store(x, ts::sum(ts::sum(t, 1), 0));
  });
  CHECK_NOTHROW(trace(at_limit));
}

TEST_CASE("tile dims that are not powers of two are refused wherever a shape is made", "[dsl][limits]") {
  std::string msg;
  auto full = ts::kernel("odd_full", [](ts::Ptr<float> x) {
    g_line = __LINE__; auto t = ts::full<float>({4, 3}, 1.0f);
    ts::store(x, ts::sum(ts::sum(t, 1), 0));
  });
  msg = trace_error<ts::ProgramError>(full);
  CHECK_THAT(msg,
             Contains("full: dim 1 of <4x3> is 3, not a power of two") && Contains(at_line(g_line)));
  auto empty = ts::kernel("empty_full", [](ts::Ptr<float> x) {
    g_line = __LINE__; auto t = ts::zeros<float>({0});
    ts::store(x, ts::sum(t, 0));
  });
  msg = trace_error<ts::ProgramError>(empty);
  CHECK_THAT(msg, Contains("full: dim 0 of <0> is 0, not positive") && Contains(at_line(g_line)));
  auto bcast = ts::kernel("odd_bcast", [](ts::Ptr<std::int32_t> x) {
    g_line = __LINE__; auto c = ts::arange(0, 4).col().broadcast_to({4, 6});
    ts::store(x, ts::sum(ts::sum(c, 1), 0));
  });
  msg = trace_error<ts::ProgramError>(bcast);
  CHECK_THAT(msg,
             Contains("broadcast_to: dim 1 of <4x6> is 6, not a power of two") && Contains(at_line(g_line)));
  auto reshaped = ts::kernel("odd_reshape", [](ts::Ptr<std::int32_t> x) {
    g_line = __LINE__; auto c = ts::arange(0, 16).reshape({-4, -4});
    ts::store(x, ts::sum(ts::sum(c, 1), 0));
  });
  msg = trace_error<ts::ProgramError>(reshaped);
  CHECK_THAT(msg, Contains("reshape of <16>: dim 0 of <-4x-4> is -4, not positive") && Contains(at_line(g_line)));
}

namespace {

// Nests `depth` for_range (or if_) bodies and calls `innermost` in the innermost one.
template <class F>
void nest(int depth, bool loops, F&& innermost) {
  if (depth == 0) {
    innermost();
    return;
  }
  if (loops) {
    g_line = __LINE__; ts::for_range(0, 1, [&] { nest(depth - 1, loops, innermost); });
  } else {
    g_line = __LINE__; ts::if_(ts::program_id(0) == 0, [&] { nest(depth - 1, loops, innermost); });
  }
}

}  // namespace

TEST_CASE("for_range, if_ and reduce bodies nested more than 512 deep are refused", "[dsl][limits]") {
  std::string msg;
  auto k = ts::kernel("deep", [](ts::Ptr<std::int32_t> x) {
    ts::Int acc = ts::zeros<std::int32_t>({});
    nest(static_cast<int>(ts::meta("DEPTH")), ts::meta("LOOPS") != 0, [&] {
      if (ts::meta("SUM") != 0) {
        g_line = __LINE__; acc = acc + ts::sum(ts::arange(0, 4), 0);
      } else {
        acc = acc + 1;
      }
    });
    ts::store(x, acc);
  });
  msg = trace_error<ts::ProgramError>(k, {{"DEPTH", 513}, {"LOOPS", 1}, {"SUM", 0}});
  CHECK_THAT(msg,
             Contains("for_range would nest regions 513 deep, more than the 512 allowed") && Contains(at_line(g_line)));
  msg = trace_error<ts::ProgramError>(k, {{"DEPTH", 600}, {"LOOPS", 0}, {"SUM", 0}});
  CHECK_THAT(msg,
             Contains("if_ would nest regions 513 deep") && Contains(at_line(g_line)));
  // A reduction's combine function is a region too.
  msg = trace_error<ts::ProgramError>(k, {{"DEPTH", 512}, {"LOOPS", 1}, {"SUM", 1}});
  CHECK_THAT(msg,
             Contains("reduce would nest regions 513 deep") && Contains(at_line(g_line)));
  // 512 is allowed, and runs.
  auto m = trace(k, {{"DEPTH", 512}, {"LOOPS", 1}, {"SUM", 0}});
  CHECK(count_ops(m->entry(), ir::OpKind::For) == 512);
  CHECK_NOTHROW(trace(k, {{"DEPTH", 511}, {"LOOPS", 0}, {"SUM", 1}}));
  std::vector<std::int32_t> out(1, -1);
  run(k, {{"DEPTH", 512}, {"LOOPS", 1}, {"SUM", 0}}, {1, 1, 1}, out);
  CHECK(out[0] == 1);
}

TEST_CASE("a meta-parameter given twice is a LaunchError naming it and the kernel", "[dsl][limits]") {
  std::string msg;
  g_line = __LINE__; auto k = ts::kernel("dup_meta", [](ts::Ptr<float> x) {
    ts::store(x + ts::arange(0, ts::meta("BLOCK")), 0.0f);
  });
  msg = trace_error<ts::LaunchError>(k, {{"BLOCK", 64}, {"N", 3}, {"BLOCK", 128}});
  CHECK_THAT(msg, Contains("launch of kernel 'dup_meta'") &&
                      Contains("the meta-parameter 'BLOCK' is given twice (64 and 128)") && Contains(at_line(g_line)));
  CHECK_NOTHROW(trace(k, {{"BLOCK", 64}, {"N", 3}}));
}

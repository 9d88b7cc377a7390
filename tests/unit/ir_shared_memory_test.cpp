// The shared-memory plan (jit/analysis/shared_memory.hpp): regions and the barriers its analysis
// places, on programs whose layouts the coalescing pass chose (4 warps of 32 threads).
#include <catch2/catch.hpp>

#include <string>

#include "jit/analysis/shared_memory.hpp"
#include "jit/ir/parser.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/transforms/assign_layouts.hpp"

using namespace tessera;

namespace {

std::unique_ptr<ir::Module> with_layouts(const std::string& body, const std::string& args = "%x: ptr<f32>, %y: ptr<f32>") {
  auto m = ir::parse_module("kernel @k(" + args + ") num_warps = 4 {\n" + body + "  return\n}\n");
  ir::verify(*m);
  transforms::assign_layouts(*m, {.warp_size = 32});
  ir::verify(*m);
  return m;
}

// Loads a 1024-element f32 row of %x as %row.
const std::string kLoadRow = R"(
  %i = arange {end = 1024, start = 0} : <1024xi32>
  %px = splat %x : <1024xptr<f32>>
  %ax = addptr %px, %i : <1024xptr<f32>>
  %row = load %ax : <1024xf32>
)";

std::string sum_of(const std::string& result, const std::string& operand, const std::string& combine = "add") {
  return "  %" + result + " = reduce %" + operand + " {axis = 0} : f32 {\n  ^bb(%" + result + "a: f32, %" + result +
         "b: f32):\n    %" + result + "c = " + combine + " %" + result + "a, %" + result + "b : f32\n    yield %" + result +
         "c\n  }\n";
}

const std::string kStoreScalar(const std::string& v) { return "  store %y, %" + v + "\n"; }

std::vector<const ir::Op*> ops_of_kind(const ir::Module& m, ir::OpKind k) {
  std::vector<const ir::Op*> out;
  ir::walk(const_cast<ir::Block&>(m.entry()), [&](const ir::Op& op) {
    if (op.kind == k) out.push_back(&op);
  });
  return out;
}

}  // namespace

TEST_CASE("two reductions in a row: a barrier inside each, none between them", "[shared_memory]") {
  auto m = with_layouts(kLoadRow + sum_of("mx", "row", "max") + sum_of("s", "row") + kStoreScalar("mx") + kStoreScalar("s"));
  analysis::SharedMemoryPlan plan(*m);
  auto reduces = ops_of_kind(*m, ir::OpKind::Reduce);
  REQUIRE(reduces.size() == 2);
  CHECK_FALSE(plan.barrier_before(*reduces[0], 0));
  CHECK(plan.barrier_before(*reduces[0], 1));
  CHECK_FALSE(plan.barrier_before(*reduces[1], 0));  // its own region: the first one's reads do not conflict
  CHECK(plan.barrier_before(*reduces[1], 1));
  CHECK(plan.num_barriers() == 2);
  // Private regions that do not overlap, 4 warps x 1 f32 each.
  CHECK(plan.offset(*reduces[0]) != plan.offset(*reduces[1]));
  CHECK(plan.total_bytes() == 32);
}

TEST_CASE("a reduction in a loop: the next iteration's writes wait for this one's reads", "[shared_memory]") {
  const std::string loop = R"(
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %c4 = constant {value = 4} : i32
  for %c0, %c4, %c1 {
  ^bb(%it: i32):
)" + kLoadRow + sum_of("s", "row") + kStoreScalar("s") + "    yield\n  }\n";
  auto m = with_layouts(loop);
  analysis::SharedMemoryPlan plan(*m);
  auto reduces = ops_of_kind(*m, ir::OpKind::Reduce);
  REQUIRE(reduces.size() == 1);
  CHECK(plan.barrier_before(*reduces[0], 0));
  CHECK(plan.barrier_before(*reduces[0], 1));
}

TEST_CASE("two reductions in a loop: each one's barrier covers the other's next writes", "[shared_memory]") {
  const std::string loop = R"(
  %c0 = constant {value = 0} : i32
  %c1 = constant {value = 1} : i32
  %c4 = constant {value = 4} : i32
  for %c0, %c4, %c1 {
  ^bb(%it: i32):
)" + kLoadRow + sum_of("mx", "row", "max") + sum_of("s", "row") + kStoreScalar("mx") + kStoreScalar("s") + "    yield\n  }\n";
  auto m = with_layouts(loop);
  analysis::SharedMemoryPlan plan(*m);
  auto reduces = ops_of_kind(*m, ir::OpKind::Reduce);
  REQUIRE(reduces.size() == 2);
  // Iteration k+1's first writes follow iteration k's second barrier, which ordered the first
  // reduction's reads; the second reduction's writes follow the first one's barrier.
  CHECK(plan.num_barriers() == 2);
  CHECK(plan.barrier_before(*reduces[0], 1));
  CHECK(plan.barrier_before(*reduces[1], 1));
}

TEST_CASE("shape ops share one region: the second one's writes wait for the first one's reads", "[shared_memory]") {
  const std::string body = kLoadRow + R"(
  %sq = reshape %row : <32x32xf32>
  %back = reshape %sq : <1024xf32>
  %py = splat %y : <1024xptr<f32>>
  %ay = addptr %py, %i : <1024xptr<f32>>
  store %ay, %back
)";
  auto m = with_layouts(body);
  analysis::SharedMemoryPlan plan(*m);
  auto reshapes = ops_of_kind(*m, ir::OpKind::Reshape);
  REQUIRE(reshapes.size() == 2);
  CHECK(plan.offset(*reshapes[0]) == 0);
  CHECK(plan.offset(*reshapes[1]) == 0);
  CHECK_FALSE(plan.barrier_before(*reshapes[0], 0));
  CHECK(plan.barrier_before(*reshapes[0], 1));
  CHECK(plan.barrier_before(*reshapes[1], 0));
  CHECK(plan.barrier_before(*reshapes[1], 1));
  CHECK(plan.total_bytes() == 4096);
}

TEST_CASE("an if joins its arms: a conflict in either arm places the barrier after it", "[shared_memory]") {
  const std::string body = kLoadRow + R"(
  %c0 = constant {value = 0} : i32
  %cond = cmp_lt %c0, %c0 : i1
  if %cond {
    %sq = reshape %row : <32x32xf32>
    %back = reshape %sq : <1024xf32>
    %py = splat %y : <1024xptr<f32>>
    %ay = addptr %py, %i : <1024xptr<f32>>
    store %ay, %back
    yield
  } else {
    yield
  }
  %sq2 = reshape %row : <32x32xf32>
  %back2 = reshape %sq2 : <1024xf32>
  %py2 = splat %y : <1024xptr<f32>>
  %ay2 = addptr %py2, %i : <1024xptr<f32>>
  store %ay2, %back2
)";
  auto m = with_layouts(body);
  analysis::SharedMemoryPlan plan(*m);
  auto reshapes = ops_of_kind(*m, ir::OpKind::Reshape);
  REQUIRE(reshapes.size() == 4);
  CHECK(plan.barrier_before(*reshapes[2], 0));  // the then arm left reads pending
}

TEST_CASE("an atomic whose old values nobody reads uses no shared memory", "[shared_memory]") {
  const std::string body = R"(
  %one = constant {value = 1.0} : f32
  %old = atomic_rmw %x, %one {op = "add", scope = "gpu", sem = "relaxed"} : f32
)";
  auto m = with_layouts(body);
  analysis::SharedMemoryPlan plan(*m);
  auto atomics = ops_of_kind(*m, ir::OpKind::AtomicRmw);
  REQUIRE(atomics.size() == 1);
  CHECK_FALSE(plan.has_region(*atomics[0]));
  CHECK(plan.total_bytes() == 0);
}

// Findings of the IR fuzzer (tests/fuzz/ir_fuzz.cpp) and of reading the code for their siblings:
// each was undefined behaviour, a crash or a wrong answer on IR that parses and verifies; each
// case pins the right answer.
#include <catch2/catch.hpp>

#include "jit/analysis/axis_info.hpp"
#include "jit/ir/parser.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/transforms/passes.hpp"
#include "tessera/error.hpp"

using namespace tessera;
using analysis::AxisInfoAnalysis;
using Catch::Contains;

namespace {

// The value the op at `index` of the kernel body defines.
const ir::Value* result_of(const ir::Module& m, std::size_t index) { return m.entry().ops.at(index)->result(); }

void run_all_passes(ir::Module& m) {
  std::vector<std::string> all = transforms::pass_names();
  REQUIRE_NOTHROW(transforms::run_pass_pipeline(m, all));
}

}  // namespace

TEST_CASE("fuzz: huge argument divisibility facts do not overflow the axis analysis", "[ir][fuzz]") {
  // 2^62 * 2^62 overflowed int64 in the divisibility of a mul (and of addptr's byte offsets).
  auto m = ir::parse_module(R"(kernel @k(%p: ptr<f32> {divisibility = 4611686018427387904}, %n: i32 {divisibility = 4611686018427387904}, %m: i32 {divisibility = 3221225472}) num_warps = 4 {
  %0 = mul %n, %n : i32
  %1 = mul %m, %n : i32
  %2 = addptr %p, %0 : ptr<f32>
  %3 = load %2 : f32
  store %2, %3
  return
}
)");
  ir::verify(*m);
  AxisInfoAnalysis axis(*m);
  const auto& args = m->entry().args;
  CHECK(axis.get(args[0].get()).div(0) == AxisInfoAnalysis::kMaxDivisibility);
  CHECK(axis.get(args[1].get()).div(0) == AxisInfoAnalysis::kMaxDivisibility);
  // 3 * 2^30: its largest power-of-two divisor, never 3 * 2^30 itself (entries are powers of two).
  CHECK(axis.get(args[2].get()).div(0) == (std::int64_t{1} << 30));
  CHECK(axis.get(result_of(*m, 0)).div(0) == AxisInfoAnalysis::kMaxDivisibility);
  CHECK(axis.get(result_of(*m, 1)).div(0) == AxisInfoAnalysis::kMaxDivisibility);
  CHECK(axis.get(result_of(*m, 2)).div(0) == AxisInfoAnalysis::kMaxDivisibility);
  run_all_passes(*m);
}

TEST_CASE("fuzz: the power-of-two divisor of INT64_MIN", "[ir][fuzz]") {
  // x & -x negated INT64_MIN (undefined behaviour) for an i64 constant of that value.
  CHECK(AxisInfoAnalysis::pow2_divisor(std::numeric_limits<std::int64_t>::min()) == AxisInfoAnalysis::kMaxDivisibility);
  CHECK(AxisInfoAnalysis::pow2_divisor(-12) == 4);
  CHECK(AxisInfoAnalysis::pow2_divisor(48) == 16);
  CHECK(AxisInfoAnalysis::pow2_divisor(0) == AxisInfoAnalysis::kMaxDivisibility);
  auto m = ir::parse_module(R"(kernel @k(%p: ptr<i64>) num_warps = 4 {
  %0 = constant {value = -9223372036854775808} : i64
  %1 = addptr %p, %0 : ptr<i64>
  %2 = load %1 : i64
  store %1, %2
  return
}
)");
  ir::verify(*m);
  CHECK(AxisInfoAnalysis(*m).get(result_of(*m, 0)).div(0) == AxisInfoAnalysis::kMaxDivisibility);
  run_all_passes(*m);
}

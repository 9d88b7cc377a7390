// Axis analysis (jit/analysis/axis_info.cpp) of the user's promises: an `assume` replaces what it
// states and keeps the rest of what was proven.
#include <catch2/catch.hpp>

#include "jit/analysis/axis_info.hpp"
#include "jit/ir/parser.hpp"
#include "jit/ir/verifier.hpp"

using namespace tessera;
using analysis::AxisInfoAnalysis;

namespace {
const ir::Value* result_of(const ir::Module& m, std::size_t index) { return m.entry().ops.at(index)->result(); }
}  // namespace

TEST_CASE("axis info: assume replaces contiguity and divisibility as Triton's hints do", "[ir][axis]") {
  // rows = (pid * 64 + arange) % n: a remainder proves nothing; the promise restores runs of 64
  // starting at multiples of 64. A promised divisibility keeps its largest power-of-two divisor.
  auto m = ir::parse_module(R"(kernel @k(%p: ptr<f32> {divisibility = 16}, %n: i32) num_warps = 4 {
  %0 = program_id {axis = 0} : i32
  %1 = constant {value = 64} : i32
  %2 = mul %0, %1 : i32
  %3 = splat %2 : <64xi32>
  %4 = arange {start = 0, end = 64} : <64xi32>
  %5 = add %3, %4 : <64xi32>
  %6 = splat %n : <64xi32>
  %7 = rem %5, %6 : <64xi32>
  %8 = assume %7 {divisibility = [64]} : <64xi32>
  %9 = assume %7 {contiguity = [64], divisibility = [64]} : <64xi32>
  %10 = assume %5 {divisibility = [48]} : <64xi32>
  %11 = splat %p : <64xptr<f32>>
  %12 = addptr %11, %9 : <64xptr<f32>>
  %13 = assume %3 {contiguity = [1]} : <64xi32>
  return
}
)");
  ir::verify(*m);
  AxisInfoAnalysis axis(*m);
  const auto& rem = axis.get(result_of(*m, 7));
  CHECK(rem.contig(0) == 1);
  CHECK(rem.div(0) == 1);
  const auto& div_only = axis.get(result_of(*m, 8));
  CHECK(div_only.contig(0) == 1);  // as proven: every element a multiple of 64
  CHECK(div_only.div(0) == 64);
  const auto& both = axis.get(result_of(*m, 9));
  CHECK(both.contig(0) == 64);
  CHECK(both.div(0) == 64);
  CHECK(both.cnst(0) == 1);
  const auto& odd = axis.get(result_of(*m, 10));
  CHECK(odd.contig(0) == 64);  // kept from pid * 64 + arange
  CHECK(odd.div(0) == 16);     // 48 = 3 * 16
  // p (16-byte aligned) + runs of 64 ints starting at multiples of 64: 16-byte aligned runs of 64.
  const auto& ptrs = axis.get(result_of(*m, 12));
  CHECK(ptrs.contig(0) == 64);
  CHECK(ptrs.div(0) == 16);
  // A contiguity of 1 says nothing against constancy: the splat stays constant.
  const auto& splat = axis.get(result_of(*m, 13));
  CHECK(splat.contig(0) == 1);
  CHECK(splat.cnst(0) == 64);
}

TEST_CASE("axis info: min and max divide by what both operands divide by", "[ir][axis]") {
  // A clamped block start min(s + 8192, n - 8192), n divisible by 16, stays a multiple of 16 (the
  // cross-entropy forward's unmasked prefetch keeps its 16-byte vectors on it); with an odd
  // operand nothing is left.
  auto m = ir::parse_module(R"(kernel @k(%n: i32 {divisibility = 16}, %odd: i32) num_warps = 4 {
  %0 = program_id {axis = 0} : i32
  %1 = constant {value = 8192} : i32
  %2 = mul %0, %1 : i32
  %3 = add %2, %1 : i32
  %4 = sub %n, %1 : i32
  %5 = min %3, %4 : i32
  %6 = max %3, %4 : i32
  %7 = min %3, %odd : i32
  %8 = arange {start = 0, end = 64} : <64xi32>
  %9 = splat %4 : <64xi32>
  %10 = min %8, %9 : <64xi32>
  return
}
)");
  ir::verify(*m);
  AxisInfoAnalysis axis(*m);
  CHECK(axis.get(result_of(*m, 5)).div(0) == 16);
  CHECK(axis.get(result_of(*m, 6)).div(0) == 16);
  CHECK(axis.get(result_of(*m, 7)).div(0) == 1);
  // min(arange(0, 64), n - 8192) is 0, 1, 2, ... where n is large: not a multiple of anything.
  CHECK(axis.get(result_of(*m, 10)).div(0) == 1);
  CHECK(axis.get(result_of(*m, 10)).contig(0) == 1);
}

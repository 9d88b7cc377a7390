// Evaluation of one op on whole tiles (private to the interpreter). Each evaluator implements the
// semantics written in jit/ir/ops.def for its family of ops and returns the op's result.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "jit/interp/tile.hpp"
#include "tessera/args.hpp"

namespace tessera::interp {

// Which program of the grid is running.
struct ProgramPoint {
  std::array<std::int64_t, 3> id{};
  Dim3 grid{};
};

// constant, program_id, num_programs, arange.
Tile eval_source(const ir::Op& op, const ProgramPoint& p);
// splat, broadcast, expand_dims, convert_layout.
Tile eval_shape(const ir::Op& op, const Tile& in);
// add sub mul div rem and or xor shl shr min max.
Tile eval_binary(const ir::Op& op, const Tile& a, const Tile& b);
// cmp_eq cmp_ne cmp_lt cmp_le cmp_gt cmp_ge.
Tile eval_compare(const ir::Op& op, const Tile& a, const Tile& b);
// neg not exp log sqrt abs.
Tile eval_unary(const ir::Op& op, const Tile& a);
Tile eval_cast(const ir::Op& op, const Tile& a);
// The same bytes under the result's element type (ops.def: widths equal, i1 excluded).
Tile eval_bitcast(const ir::Op& op, const Tile& a);
// assume (assume.cpp): checks the promise of ops.def `assume` on x, a ProgramError naming the line
// when it is broken. divisibility_groups[d]: the run length along dim d whose first elements the
// divisibility speaks of (the contiguity attr, else what axis analysis proves of the operand).
void check_assume(const ir::Op& op, const Tile& x, const std::vector<std::int64_t>& divisibility_groups);
// exp2 log2 rsqrt sin cos tanh sigmoid erf floor ceil, pow and fma (math.cpp): host libm in the
// element type, f16/bf16 through f32.
bool is_math_op(ir::OpKind k);
Tile eval_math(const ir::Op& op, const std::vector<const Tile*>& operands);
// dot(a, b, acc) (dot.cpp): acc + a·b in the accumulator's type, as ops.def says.
Tile eval_dot(const ir::Op& op, const Tile& a, const Tile& b, const Tile& acc);
Tile eval_select(const ir::Op& op, const Tile& cond, const Tile& a, const Tile& b);
// print (print.cpp): the op's lines, on stdout.
void exec_print(const ir::Op& op, const ProgramPoint& p, const std::vector<const Tile*>& operands);
// assert (assert.cpp): a ProgramError at the first false element of `cond`.
void exec_assert(const ir::Op& op, const ProgramPoint& p, const Tile& cond);
// reshape, trans, join (two operands) and split (two results) (reshape.cpp): the results in order.
std::vector<Tile> eval_reshape_family(const ir::Op& op, const std::vector<const Tile*>& operands);

}  // namespace tessera::interp

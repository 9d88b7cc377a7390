// The boundary between the header-only DSL front (tiles, operators, kernel templates) and the
// tracer compiled into libtessera (dsl/src). Public headers see the IR only as opaque pointers:
// they are installed without jit/ headers. Users never call these functions directly.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/dtype.hpp"
#include "tessera/export.hpp"

namespace tessera::ir {
class Value;
class Module;
}  // namespace tessera::ir

namespace tessera {

using Shape = std::vector<std::int64_t>;
using Loc = std::source_location;

namespace detail {

struct TraceState;

// A C++ variable holding a tile, as the tracer sees it (see dsl/src/variables.cpp): it knows the
// variable's current SSA value in each open loop/branch body, which is how loop-carried values are
// discovered. Every Tile owns one.
struct Slot;
using SlotPtr = std::shared_ptr<Slot>;

TESSERA_API SlotPtr slot_new(ir::Value* v, const Loc& loc);
TESSERA_API ir::Value* slot_read(const SlotPtr& s, const Loc& loc);
TESSERA_API void slot_assign(SlotPtr& s, ir::Value* v, const Loc& loc);

// A C++ scalar operand, materialized as a constant of the type the operation computes in.
struct ScalarValue {
  bool is_float = false;
  std::int64_t i = 0;
  double f = 0;
};
template <class S>
ScalarValue scalar_value(S s) {
  if constexpr (std::is_floating_point_v<S>) return {true, 0, static_cast<double>(s)};
  else return {false, static_cast<std::int64_t>(s), 0};
}

enum class BinOp : std::uint8_t { Add, Sub, Mul, Div, Rem, And, Or, Xor, Shl, Shr, Min, Max, Eq, Ne, Lt, Le, Gt, Ge };
enum class UnOp : std::uint8_t { Neg, Not, Exp, Log, Sqrt, Abs, Exp2, Log2, Rsqrt, Sin, Cos, Tanh, Sigmoid, Erf, Floor, Ceil };

TESSERA_API Shape value_shape(const ir::Value* v);
// A ProgramError for a misuse found by a header-only op (sort's dim, topk's k), naming the user's line.
[[noreturn]] TESSERA_API void user_error(const Loc& loc, const std::string& what);
TESSERA_API ir::Value* emit_constant(DType d, ScalarValue s, const Shape& shape, const Loc& loc);
// A C++ number converted to `d` as a cast converts a value (Triton's conversion of a load's
// `other` and of a stored value): a float truncates toward zero into an int type, an int wraps
// into a narrower one (-1 into u8 is 255).
TESSERA_API ir::Value* emit_converted_constant(DType d, ScalarValue s, const Loc& loc);
// Casts both operands to `compute`, broadcasts their shapes (numpy rules, equal ranks or a scalar)
// and applies the op; comparisons give i1.
TESSERA_API ir::Value* emit_binary(BinOp op, ir::Value* a, ir::Value* b, DType compute, const Loc& loc);
// a / b in `compute` (f32 or f64), correctly rounded on every target (div {rounding = "rn"}).
TESSERA_API ir::Value* emit_div_rn(ir::Value* a, ir::Value* b, DType compute, const Loc& loc);
// a / b of f32 tiles within 2 ulp where 2^-126 <= |b| <= 2^126 (div {rounding = "approx"}), and
// e^a of an f32 tile whose subnormal inputs and results may flush to zero (exp {ftz}): fast_dividef
// and fast_expf (ops.hpp). A non-f32 operand is a ProgramError naming the function.
TESSERA_API ir::Value* emit_fast_div(ir::Value* a, ir::Value* b, const Loc& loc);
TESSERA_API ir::Value* emit_fast_exp(ir::Value* a, const Loc& loc);
TESSERA_API ir::Value* emit_fast_exp2(ir::Value* a, const Loc& loc);  // 2^a, as exp {ftz}
TESSERA_API ir::Value* emit_unary(UnOp op, ir::Value* a, const Loc& loc);
// pow(a, b) and fma(a, b, c): operands cast to `compute` (a float type) and broadcast together.
TESSERA_API ir::Value* emit_pow(ir::Value* a, ir::Value* b, DType compute, const Loc& loc);
TESSERA_API ir::Value* emit_fma(ir::Value* a, ir::Value* b, ir::Value* c, DType compute, const Loc& loc);
// inline_asm_elementwise (ops.def inline_asm): args broadcast to one shape; one result per type.
TESSERA_API std::vector<ir::Value*> emit_inline_asm(const std::string& assembly, const std::string& constraints,
                                                    bool pure, int pack, std::vector<ir::Value*> args,
                                                    const std::vector<DType>& result_types, const Loc& loc);
// dot(a, b, acc): acc + a·b (ops.def); acc null means zeros of the accumulator type a's type gets
// (f32 for float operands, i32 for i8).
// input_precision: an InputPrecision as int for f32 operands, -1 for the default (tf32).
TESSERA_API ir::Value* emit_dot(ir::Value* a, ir::Value* b, ir::Value* acc, int input_precision, const Loc& loc);
TESSERA_API ir::Value* emit_addptr(ir::Value* ptr, ir::Value* offset, const Loc& loc);
TESSERA_API ir::Value* emit_cast(ir::Value* a, DType to, const Loc& loc);
// A cast with {rounding = "rtz"} when `toward_zero` (a float downcast only: else a ProgramError).
TESSERA_API ir::Value* emit_cast_rounded(ir::Value* a, DType to, bool toward_zero, const Loc& loc);
// The same bits as `to` (a pointer: to a pointer to `pointee`); ops.def `bitcast`.
TESSERA_API ir::Value* emit_bitcast(ir::Value* a, DType to, DType pointee, const Loc& loc);
// a with the user's promise about its runs (ops.def `assume`; empty: not promised). An assume of an
// assume's result becomes one assume of the inner operand with both promises, the outer winning
// where both speak (as Triton's nested max_contiguous(multiple_of(x, d), c) is read).
TESSERA_API ir::Value* emit_assume(ir::Value* a, const std::vector<std::int64_t>& contiguity,
                                   const std::vector<std::int64_t>& divisibility, const Loc& loc);
TESSERA_API ir::Value* emit_expand_dims(ir::Value* a, int axis, const Loc& loc);
TESSERA_API ir::Value* emit_broadcast_to(ir::Value* a, const Shape& shape, const Loc& loc);
// Shape ops (dsl/src/shape_ops.cpp): reshape keeps the row-major order; permute gives result dim i
// from operand dim order[i]; join adds a last dim of 2 ([..., 0] = a); split undoes it.
TESSERA_API ir::Value* emit_reshape(ir::Value* a, const Shape& shape, const Loc& loc);
// `what` names the DSL function in errors ("trans" or "permute").
TESSERA_API ir::Value* emit_permute(ir::Value* a, const std::vector<int>& order, const char* what, const Loc& loc);
TESSERA_API ir::Value* emit_join(ir::Value* a, ir::Value* b, const Loc& loc);
TESSERA_API std::pair<ir::Value*, ir::Value*> emit_split(ir::Value* a, const Loc& loc);
// Built from the four above: cat along dim 0 in order, interleave along the last dim, ravel to
// 1-D, flip along `dim` (negative from the end).
TESSERA_API ir::Value* emit_cat(ir::Value* a, ir::Value* b, const Loc& loc);
TESSERA_API ir::Value* emit_interleave(ir::Value* a, ir::Value* b, const Loc& loc);
TESSERA_API ir::Value* emit_ravel(ir::Value* a, const Loc& loc);
TESSERA_API ir::Value* emit_flip(ir::Value* a, int dim, const Loc& loc);
// gather {axis}(src, index) (ops.def); axis negative counts from the end.
TESSERA_API ir::Value* emit_gather(ir::Value* src, ir::Value* index, int axis, const Loc& loc);
TESSERA_API ir::Value* emit_select(ir::Value* cond, ir::Value* a, ir::Value* b, DType compute, const Loc& loc);
TESSERA_API ir::Value* emit_select_pointer(ir::Value* cond, ir::Value* a, ir::Value* b, const Loc& loc);
TESSERA_API ir::Value* emit_program_id(int axis, bool num_programs, const Loc& loc);
TESSERA_API ir::Value* emit_arange(std::int64_t start, std::int64_t end, const Loc& loc);
TESSERA_API ir::Value* emit_full(const Shape& shape, DType d, ScalarValue v, const Loc& loc);
// A load's or store's cache and eviction hints as the IR spells them ("" for none; ops.def `load`).
struct AccessHintNames {
  const char* cache = "";
  const char* eviction = "";
};
TESSERA_API ir::Value* emit_load(ir::Value* ptr, ir::Value* mask, ir::Value* other, AccessHintNames hints,
                                 const Loc& loc);
TESSERA_API void emit_store(ir::Value* ptr, ir::Value* value, ir::Value* mask, AccessHintNames hints, const Loc& loc);

// Structured control flow. The tracer runs the body callbacks itself, with the body's region
// open, and turns outer variables reassigned inside into loop-carried values / if results.
// num_stages > 0 marks the loop for the pipeline pass ({num_stages = N}: LoopOptions).
TESSERA_API void trace_for(ir::Value* lb, ir::Value* ub, ir::Value* step,
                           const std::function<void(ir::Value* iv)>& body, int num_stages, const Loc& loc);
TESSERA_API void trace_if(ir::Value* cond, const std::function<void()>& then_body,
                          const std::function<void()>* else_body, const Loc& loc);
// A debug_barrier op (ops.def) at the current point of the trace.
TESSERA_API void emit_debug_barrier(const Loc& loc);
// A print op (ops.def) of `values` with `prefix` as the user wrote it (normalized here, as Triton
// does), in hex when `hex`; a prefix that is not printable ASCII is a ProgramError naming the line.
TESSERA_API void emit_print(std::string_view prefix, const std::vector<ir::Value*>& values, bool hex, const Loc& loc);
// An assert op (ops.def) of the i1 value `cond`; a message that is not printable ASCII is a
// ProgramError naming the line.
TESSERA_API void emit_assert(ir::Value* cond, std::string_view message, const Loc& loc);
// while (cond()) body(), as a do_while op (ops.def); cond returns the IR value of a scalar mask.
TESSERA_API void trace_while(const std::function<ir::Value*()>& cond, const std::function<void()>& body,
                             const Loc& loc);

// The symbolic value of kernel argument `index` (the kernel body's parameters).
TESSERA_API ir::Value* kernel_arg(TraceState& st, int index);

}  // namespace detail
}  // namespace tessera

// The DSL's operations as IR: implicit casts and broadcasting (numpy rules, equal ranks or a
// scalar), constants, shape checks that name the user's line.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "dsl/src/trace_state.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {
namespace {

using ir::OpKind;

struct BinOpInfo {
  OpKind kind;
  const char* symbol;
  bool compare;
};

BinOpInfo info(BinOp op) {
  switch (op) {
    case BinOp::Add: return {OpKind::Add, "+", false};
    case BinOp::Sub: return {OpKind::Sub, "-", false};
    case BinOp::Mul: return {OpKind::Mul, "*", false};
    case BinOp::Div: return {OpKind::Div, "/", false};
    case BinOp::Rem: return {OpKind::Rem, "%", false};
    case BinOp::And: return {OpKind::And, "&", false};
    case BinOp::Or: return {OpKind::Or, "|", false};
    case BinOp::Xor: return {OpKind::Xor, "^", false};
    case BinOp::Shl: return {OpKind::Shl, "<<", false};
    case BinOp::Shr: return {OpKind::Shr, ">>", false};
    case BinOp::Min: return {OpKind::Min, "minimum", false};
    case BinOp::Max: return {OpKind::Max, "maximum", false};
    case BinOp::Eq: return {OpKind::CmpEq, "==", true};
    case BinOp::Ne: return {OpKind::CmpNe, "!=", true};
    case BinOp::Lt: return {OpKind::CmpLt, "<", true};
    case BinOp::Le: return {OpKind::CmpLe, "<=", true};
    case BinOp::Gt: return {OpKind::CmpGt, ">", true};
    case BinOp::Ge: return {OpKind::CmpGe, ">=", true};
  }
  throw InternalError("unknown binary op");
}

OpKind unary_kind(UnOp op) {
  switch (op) {
    case UnOp::Neg: return OpKind::Neg;
    case UnOp::Not: return OpKind::Not;
    case UnOp::Exp: return OpKind::Exp;
    case UnOp::Log: return OpKind::Log;
    case UnOp::Sqrt: return OpKind::Sqrt;
    case UnOp::Abs: return OpKind::Abs;
    case UnOp::Exp2: return OpKind::Exp2;
    case UnOp::Log2: return OpKind::Log2;
    case UnOp::Rsqrt: return OpKind::Rsqrt;
    case UnOp::Sin: return OpKind::Sin;
    case UnOp::Cos: return OpKind::Cos;
    case UnOp::Tanh: return OpKind::Tanh;
    case UnOp::Sigmoid: return OpKind::Sigmoid;
    case UnOp::Erf: return OpKind::Erf;
    case UnOp::Floor: return OpKind::Floor;
    case UnOp::Ceil: return OpKind::Ceil;
  }
  throw InternalError("unknown unary op");
}

bool is_power_of_two(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// The shape two operands broadcast to: equal ranks with equal dims or a dim of 1, or a scalar.
// Broadcasting <N x 1> against <1 x M> makes N * M elements, which may pass the tile limit.
Shape broadcast_shape(const Shape& a, const Shape& b, const char* what, const Loc& loc) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  if (a.size() != b.size())
    program_error(loc, fmt::format("shape mismatch in '{}': {} vs {} (ranks differ; insert dims with expand_dims, "
                                   ".col() or .row())", what, shape_str(a), shape_str(b)));
  Shape r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1)
      program_error(loc, fmt::format("shape mismatch in '{}': {} vs {}", what, shape_str(a), shape_str(b)));
    r[i] = a[i] == 1 ? b[i] : a[i];
  }
  check_tile_shape(r, fmt::format("'{}' of {} and {}", what, shape_str(a), shape_str(b)), loc);
  return r;
}

ir::Value* cast_to(ir::Builder& b, ir::Value* v, DType d) {
  if (v->type.dtype == d) return v;
  return b.create1(OpKind::Cast, {v}, v->type.with_dtype(d));
}

ir::Value* broadcast(ir::Builder& b, ir::Value* v, const Shape& shape) {
  if (v->type.shape == shape) return v;
  if (!v->type.is_tile()) return b.create1(OpKind::Splat, {v}, v->type.with_shape(shape));
  return b.create1(OpKind::Broadcast, {v}, v->type.with_shape(shape));
}

// Whether integer constant v is representable in d (unsigned types also take their bit patterns).
bool int_fits(DType d, std::int64_t v) {
  switch (d) {
    case DType::I1: return v == 0 || v == 1;
    case DType::I8: return v >= -128 && v <= 127;
    case DType::I16: return v >= -32768 && v <= 32767;
    case DType::I32: return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
    case DType::U8: return v >= 0 && v <= 255;
    case DType::U16: return v >= 0 && v <= 65535;
    case DType::U32: return v >= 0 && v <= std::numeric_limits<std::uint32_t>::max();
    default: return true;
  }
}

}  // namespace

ir::Value* emit_constant(DType d, ScalarValue s, const Shape& shape, const Loc& loc) {
  ir::Builder& b = builder_at(loc);
  if (ir::is_float(d)) return b.float_constant(d, s.is_float ? s.f : static_cast<double>(s.i), shape);
  std::int64_t v = s.i;
  if (s.is_float) {
    if (!std::isfinite(s.f) || std::trunc(s.f) != s.f)
      program_error(loc, fmt::format("the constant {} is not an integer and cannot become {} implicitly; convert "
                                     "the tile with .to<float>()", s.f, ir::dtype_name(d)));
    v = static_cast<std::int64_t>(s.f);
  }
  if (!int_fits(d, v))
    program_error(loc, fmt::format("the constant {} does not fit in {}", v, ir::dtype_name(d)));
  return b.int_constant(d, v, shape);
}

ir::Value* emit_converted_constant(DType d, ScalarValue s, const Loc& loc) {
  const bool exact = ir::is_float(d) || (!s.is_float && int_fits(d, s.i));
  if (exact) return emit_constant(d, s, {}, loc);
  ir::Builder& b = builder_at(loc);
  ir::Value* wide = s.is_float ? b.float_constant(DType::F64, s.f, {}) : b.int_constant(DType::I64, s.i, {});
  return cast_to(b, wide, d);
}

ir::Value* emit_binary(BinOp op, ir::Value* a, ir::Value* b, DType compute, const Loc& loc) {
  const BinOpInfo i = info(op);
  const Shape shape = broadcast_shape(a->type.shape, b->type.shape, i.symbol, loc);
  ir::Builder& bld = builder_at(loc);
  a = broadcast(bld, cast_to(bld, a, compute), shape);
  b = broadcast(bld, cast_to(bld, b, compute), shape);
  const ir::Type result = ir::Type::scalar(i.compare ? DType::I1 : compute).with_shape(shape);
  return bld.create1(i.kind, {a, b}, result);
}

ir::Value* emit_div_rn(ir::Value* a, ir::Value* b, DType compute, const Loc& loc) {
  if (compute != DType::F32 && compute != DType::F64)
    program_error(loc, fmt::format("div_rn: correctly rounded division takes f32 or f64 operands (as Triton's), not "
                                   "{}; convert them with .to<float>()",
                                   ir::dtype_name(compute)));
  ir::Value* q = emit_binary(BinOp::Div, a, b, compute, loc);
  q->def->attrs["rounding"] = std::string("rn");
  return q;
}

namespace {
void require_f32(ir::Value* v, const char* what, const Loc& loc) {
  if (v->type.dtype != DType::F32)
    program_error(loc, fmt::format("{} takes f32 tiles (as CUDA's and Triton's libdevice's), not {}; convert with .to<float>()",
                                   what, ir::dtype_name(v->type.dtype)));
}
}  // namespace

ir::Value* emit_fast_div(ir::Value* a, ir::Value* b, const Loc& loc) {
  require_f32(a, "fast_dividef", loc);
  require_f32(b, "fast_dividef", loc);
  ir::Value* q = emit_binary(BinOp::Div, a, b, DType::F32, loc);
  q->def->attrs["rounding"] = std::string("approx");
  return q;
}

namespace {
ir::Value* flushing(OpKind kind, ir::Value* a, const char* what, const Loc& loc) {
  require_f32(a, what, loc);
  ir::Value* e = builder_at(loc).create1(kind, {a}, a->type);
  e->def->attrs["ftz"] = std::int64_t{1};
  return e;
}
}  // namespace

ir::Value* emit_fast_exp(ir::Value* a, const Loc& loc) { return flushing(OpKind::Exp, a, "fast_expf", loc); }
ir::Value* emit_fast_exp2(ir::Value* a, const Loc& loc) { return flushing(OpKind::Exp2, a, "fast_exp2f", loc); }

ir::Value* emit_unary(UnOp op, ir::Value* a, const Loc& loc) {
  return builder_at(loc).create1(unary_kind(op), {a}, a->type);
}

ir::Value* emit_pow(ir::Value* a, ir::Value* b, DType compute, const Loc& loc) {
  const Shape shape = broadcast_shape(a->type.shape, b->type.shape, "pow", loc);
  ir::Builder& bld = builder_at(loc);
  a = broadcast(bld, cast_to(bld, a, compute), shape);
  b = broadcast(bld, cast_to(bld, b, compute), shape);
  return bld.create1(OpKind::Pow, {a, b}, ir::Type::scalar(compute).with_shape(shape));
}

ir::Value* emit_fma(ir::Value* a, ir::Value* b, ir::Value* c, DType compute, const Loc& loc) {
  Shape shape = broadcast_shape(a->type.shape, b->type.shape, "fma", loc);
  shape = broadcast_shape(shape, c->type.shape, "fma", loc);
  ir::Builder& bld = builder_at(loc);
  a = broadcast(bld, cast_to(bld, a, compute), shape);
  b = broadcast(bld, cast_to(bld, b, compute), shape);
  c = broadcast(bld, cast_to(bld, c, compute), shape);
  return bld.create1(OpKind::Fma, {a, b, c}, ir::Type::scalar(compute).with_shape(shape));
}

std::vector<ir::Value*> emit_inline_asm(const std::string& assembly, const std::string& constraints, bool pure, int pack,
                                        std::vector<ir::Value*> args, const std::vector<DType>& result_types,
                                        const Loc& loc) {
  if (args.empty()) program_error(loc, "inline_asm_elementwise needs at least one argument tile");
  Shape shape = args[0]->type.shape;
  for (ir::Value* a : args) shape = broadcast_shape(shape, a->type.shape, "inline_asm_elementwise", loc);
  ir::Builder& bld = builder_at(loc);
  std::vector<ir::Type> operand_types, results;
  for (ir::Value*& a : args) {
    a = broadcast(bld, a, shape);
    operand_types.push_back(a->type);
  }
  for (DType d : result_types) results.push_back(ir::Type::scalar(d).with_shape(shape));
  if (auto p = ir::inline_asm_problem(operand_types, results, constraints, pack); !p.empty()) program_error(loc, p);
  ir::Op* op = bld.create(OpKind::InlineAsm, std::move(args), results,
                          {{"asm", assembly}, {"constraints", constraints}, {"pure", std::int64_t{pure ? 1 : 0}},
                           {"pack", std::int64_t{pack}}});
  std::vector<ir::Value*> out;
  for (auto& r : op->results) out.push_back(r.get());
  return out;
}

ir::Value* emit_dot(ir::Value* a, ir::Value* b, ir::Value* acc, int input_precision, const Loc& loc) {
  const Shape &sa = a->type.shape, &sb = b->type.shape;
  if (sa.size() != 2 || sb.size() != 2)
    program_error(loc, fmt::format("dot needs 2-D tiles, got {} and {}", shape_str(sa), shape_str(sb)));
  if (sa[1] != sb[0])
    program_error(loc, fmt::format("dot needs a's columns to match b's rows (K): {} times {}", shape_str(sa), shape_str(sb)));
  if (sa[0] < 16 || sb[1] < 16 || sa[1] < 16)
    program_error(loc, fmt::format("dot needs M, N and K of at least 16 (the smallest tensor-core tile), got {} times {}",
                                   shape_str(sa), shape_str(sb)));
  if (a->type.dtype != b->type.dtype)
    program_error(loc, fmt::format("dot needs a and b of one element type, got {} and {}", ir::dtype_name(a->type.dtype),
                                   ir::dtype_name(b->type.dtype)));
  const DType in = a->type.dtype;
  if (in != DType::F16 && in != DType::BF16 && in != DType::F32 && in != DType::I8 && !ir::is_fp8(in))
    program_error(loc, fmt::format("dot supports f8e4m3, f8e5m2, f16, bf16, f32 and i8 operands, got {}", ir::dtype_name(in)));
  const DType acc_type = in == DType::I8 ? DType::I32 : DType::F32;
  const Shape out{sa[0], sb[1]};
  ir::Builder& bld = builder_at(loc);
  if (!acc) {
    acc = emit_constant(acc_type, ScalarValue{false, 0, 0}, out, loc);
  } else {
    if (acc->type.shape != out)
      program_error(loc, fmt::format("dot's accumulator must be {}, got {}", shape_str(out), shape_str(acc->type.shape)));
    if (acc->type.dtype != acc_type)
      program_error(loc, fmt::format("dot of {} operands accumulates in {}, got a {} accumulator", ir::dtype_name(in),
                                     ir::dtype_name(acc_type), ir::dtype_name(acc->type.dtype)));
  }
  std::map<std::string, ir::Attr> attrs;
  if (in == DType::F32) {  // the verifier wants it on f32 operands only (ops.def)
    static constexpr const char* kPrecisions[] = {"tf32", "tf32x3", "ieee"};
    if (input_precision < -1 || input_precision > 2) program_error(loc, fmt::format("dot: no input precision {}", input_precision));
    attrs["input_precision"] = std::string(kPrecisions[input_precision < 0 ? 0 : input_precision]);
  }
  return bld.create1(OpKind::Dot, {a, b, acc}, ir::Type::scalar(acc_type).with_shape(out), std::move(attrs));
}

ir::Value* emit_addptr(ir::Value* ptr, ir::Value* offset, const Loc& loc) {
  const Shape shape = broadcast_shape(ptr->type.shape, offset->type.shape, "+", loc);
  ir::Builder& b = builder_at(loc);
  ptr = broadcast(b, ptr, shape);
  offset = broadcast(b, offset, shape);
  return b.create1(OpKind::AddPtr, {ptr, offset}, ptr->type);
}

ir::Value* emit_cast(ir::Value* a, DType to, const Loc& loc) { return cast_to(builder_at(loc), a, to); }

ir::Value* emit_cast_rounded(ir::Value* a, DType to, bool toward_zero, const Loc& loc) {
  if (!toward_zero) return emit_cast(a, to, loc);
  const DType from = a->type.dtype;
  if (!ir::is_float_downcast(from, to))
    program_error(loc, fmt::format("rounding toward zero (Rounding::rtz) applies to float downcasts (f64 to f32, f16 or "
                                   "bf16; f32 to f16 or bf16), not {} to {}",
                                   ir::dtype_name(from), ir::dtype_name(to)));
  return builder_at(loc).create1(OpKind::Cast, {a}, a->type.with_dtype(to), {{"rounding", std::string("rtz")}});
}

ir::Value* emit_bitcast(ir::Value* a, DType to, DType pointee, const Loc& loc) {
  ir::Type t = a->type.with_dtype(to);
  if (to == DType::Ptr) t.pointee = pointee;
  if (const std::string p = ir::bitcast_problem(a->type, t); !p.empty()) program_error(loc, p);
  if (t == a->type) return a;
  return builder_at(loc).create1(OpKind::Bitcast, {a}, t);
}

ir::Value* emit_assume(ir::Value* a, const std::vector<std::int64_t>& contiguity,
                       const std::vector<std::int64_t>& divisibility, const Loc& loc) {
  std::map<std::string, ir::Attr> attrs;
  if (a->def && a->def->kind == OpKind::Assume) {
    attrs = a->def->attrs;
    a = a->def->operands[0];
  }
  if (!contiguity.empty()) attrs["contiguity"] = contiguity;
  if (!divisibility.empty()) attrs["divisibility"] = divisibility;
  auto list = [&](const char* name) {
    auto it = attrs.find(name);
    return it == attrs.end() ? nullptr : std::get_if<std::vector<std::int64_t>>(&it->second);
  };
  if (const std::string p = ir::assume_problem(a->type, list("contiguity"), list("divisibility")); !p.empty())
    program_error(loc, (contiguity.empty() ? "multiple_of: " : "max_contiguous: ") + p);
  return builder_at(loc).create1(OpKind::Assume, {a}, a->type, std::move(attrs));
}

ir::Value* emit_expand_dims(ir::Value* a, int axis, const Loc& loc) {
  const int rank = a->type.rank();
  const int at = axis < 0 ? axis + rank + 1 : axis;
  if (at < 0 || at > rank)
    program_error(loc, fmt::format("expand_dims: axis {} is out of range for a tile of shape {}", axis,
                                   shape_str(a->type.shape)));
  Shape shape = a->type.shape;
  shape.insert(shape.begin() + at, 1);
  return builder_at(loc).create1(OpKind::ExpandDims, {a}, a->type.with_shape(shape), {{"axis", std::int64_t{at}}});
}

ir::Value* emit_broadcast_to(ir::Value* a, const Shape& shape, const Loc& loc) {
  check_tile_shape(shape, "broadcast_to", loc);
  const Shape& from = a->type.shape;
  bool ok = from.empty() || from.size() == shape.size();
  for (std::size_t i = 0; ok && !from.empty() && i < from.size(); ++i) ok = from[i] == shape[i] || from[i] == 1;
  if (!ok) program_error(loc, fmt::format("cannot broadcast {} to {}", shape_str(from), shape_str(shape)));
  return broadcast(builder_at(loc), a, shape);
}

ir::Value* emit_select(ir::Value* cond, ir::Value* a, ir::Value* b, DType compute, const Loc& loc) {
  Shape shape = broadcast_shape(cond->type.shape, a->type.shape, "where", loc);
  shape = broadcast_shape(shape, b->type.shape, "where", loc);
  ir::Builder& bld = builder_at(loc);
  cond = broadcast(bld, cond, shape);
  a = broadcast(bld, cast_to(bld, a, compute), shape);
  b = broadcast(bld, cast_to(bld, b, compute), shape);
  return bld.create1(OpKind::Select, {cond, a, b}, ir::Type::scalar(compute).with_shape(shape));
}

ir::Value* emit_select_pointer(ir::Value* cond, ir::Value* a, ir::Value* b, const Loc& loc) {
  if (!a->type.is_ptr() || !b->type.is_ptr() || a->type.pointee != b->type.pointee)
    program_error(loc, fmt::format("where on pointers needs two pointers to one element type, got {} and {}",
                                   ir::to_string(a->type), ir::to_string(b->type)));
  Shape shape = broadcast_shape(cond->type.shape, a->type.shape, "where", loc);
  shape = broadcast_shape(shape, b->type.shape, "where", loc);
  ir::Builder& bld = builder_at(loc);
  return bld.create1(OpKind::Select, {broadcast(bld, cond, shape), broadcast(bld, a, shape), broadcast(bld, b, shape)},
                     a->type.with_shape(shape));
}

ir::Value* emit_program_id(int axis, bool num_programs, const Loc& loc) {
  if (axis < 0 || axis > 2)
    program_error(loc, fmt::format("{}: axis must be 0, 1 or 2, got {}", num_programs ? "num_programs" : "program_id", axis));
  return builder_at(loc).create1(num_programs ? OpKind::NumPrograms : OpKind::ProgramId, {},
                                 ir::Type::scalar(DType::I32), {{"axis", std::int64_t{axis}}});
}

ir::Value* emit_arange(std::int64_t start, std::int64_t end, const Loc& loc) {
  if (!is_power_of_two(end - start))
    program_error(loc, fmt::format("arange({}, {}): the size end - start = {} must be a positive power of two",
                                   start, end, end - start));
  if (!int_fits(DType::I32, start) || !int_fits(DType::I32, end))
    program_error(loc, fmt::format("arange({}, {}): bounds must fit in i32", start, end));
  check_tile_shape({end - start}, fmt::format("arange({}, {})", start, end), loc);
  return builder_at(loc).create1(OpKind::Arange, {}, ir::Type::scalar(DType::I32).with_shape({end - start}),
                                 {{"start", start}, {"end", end}});
}

ir::Value* emit_full(const Shape& shape, DType d, ScalarValue v, const Loc& loc) {
  check_tile_shape(shape, "full", loc);
  return emit_constant(d, v, shape, loc);
}

namespace {

// A scalar pointer names one address. As in Triton, its mask and `other` must be scalars too, and
// so must a stored value: a tile stored through it would have every lane write that one address.
void check_scalar_access(const ir::Value* ptr, const ir::Value* value, const ir::Value* mask, const ir::Value* other,
                         const char* what, const Loc& loc) {
  if (ptr->type.is_tile()) return;
  const char* fix = "use a tile of pointers (p + offsets) to access a tile";
  if (value && value->type.is_tile())
    program_error(loc, fmt::format("{} of a {} tile through a scalar pointer: every lane would write the one address; "
                                   "{}, or reduce the value to a scalar first (ts::sum, ts::max)",
                                   what, shape_str(value->type.shape), fix));
  if (mask && mask->type.is_tile())
    program_error(loc, fmt::format("{} through a scalar pointer with a {} mask: the mask of a scalar access must be a "
                                   "scalar; {}", what, shape_str(mask->type.shape), fix));
  if (other && other->type.is_tile())
    program_error(loc, fmt::format("{} through a scalar pointer with a {} `other`: `other` of a scalar load must be a "
                                   "scalar; {}", what, shape_str(other->type.shape), fix));
}

// The attrs of a load's or store's hints (ops.def `load`), refused at the user's line where PTX
// could not carry them.
std::map<std::string, ir::Attr> hint_attrs(bool is_load, AccessHintNames hints, const Loc& loc) {
  if (const std::string p = ir::access_hints_problem(is_load, hints.cache, hints.eviction); !p.empty())
    program_error(loc, p);
  std::map<std::string, ir::Attr> attrs;
  if (*hints.cache) attrs["cache"] = std::string(hints.cache);
  if (*hints.eviction) attrs["eviction"] = std::string(hints.eviction);
  return attrs;
}

}  // namespace

ir::Value* emit_load(ir::Value* ptr, ir::Value* mask, ir::Value* other, AccessHintNames hints, const Loc& loc) {
  check_scalar_access(ptr, nullptr, mask, other, "load", loc);
  const auto attrs = hint_attrs(true, hints, loc);
  Shape shape = ptr->type.shape;
  if (mask) shape = broadcast_shape(shape, mask->type.shape, "load", loc);
  if (other) shape = broadcast_shape(shape, other->type.shape, "load", loc);
  ir::Builder& b = builder_at(loc);
  std::vector<ir::Value*> operands{broadcast(b, ptr, shape)};
  if (mask) operands.push_back(broadcast(b, mask, shape));
  if (other) {
    if (!mask) operands.push_back(b.int_constant(DType::I1, 1, shape));
    operands.push_back(broadcast(b, cast_to(b, other, ptr->type.pointee), shape));
  }
  return b.create1(OpKind::Load, operands, ir::Type::scalar(ptr->type.pointee).with_shape(shape), attrs);
}

void emit_store(ir::Value* ptr, ir::Value* value, ir::Value* mask, AccessHintNames hints, const Loc& loc) {
  check_scalar_access(ptr, value, mask, nullptr, "store", loc);
  const auto attrs = hint_attrs(false, hints, loc);
  Shape shape = broadcast_shape(ptr->type.shape, value->type.shape, "store", loc);
  if (mask) shape = broadcast_shape(shape, mask->type.shape, "store", loc);
  ir::Builder& b = builder_at(loc);
  std::vector<ir::Value*> operands{broadcast(b, ptr, shape), broadcast(b, cast_to(b, value, ptr->type.pointee), shape)};
  if (mask) operands.push_back(broadcast(b, mask, shape));
  b.create(OpKind::Store, operands, {}, attrs);
}

}  // namespace tessera::detail

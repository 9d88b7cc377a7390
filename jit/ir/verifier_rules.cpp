#include "jit/ir/verifier_rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "jit/ir/print_format.hpp"

namespace tessera::ir {

bool same_type(const Type& a, const Type& b) {
  return a.same_element_and_shape(b) && a.layout == b.layout;
}

namespace {

std::string ty(const Value* v) { return to_string(v->type); }
bool is_pow2(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

const Type& operand_type(const Op& op, int i) { return op.operands[i]->type; }
const Type& result_type(const Op& op) { return op.results[0]->type; }

// A value's type as an i1 mask of the same shape (layout kept): what compare yields.
Type mask_like(const Type& t) {
  Type m = t;
  m.dtype = DType::I1;
  m.pointee = DType::I32;
  return m;
}

std::string elementwise_same(const Op& op) {
  for (std::size_t i = 1; i < op.operands.size(); ++i)
    if (!same_type(operand_type(op, 0), operand_type(op, i)))
      return fmt::format("operand types differ: {} vs {}", ty(op.operands[0]), ty(op.operands[i]));
  return "";
}

std::string int_attr_problem(const Op& op, const char* name) {
  auto it = op.attrs.find(name);
  if (it == op.attrs.end() || !std::holds_alternative<std::int64_t>(it->second))
    return fmt::format("'{}' needs an integer attribute '{}'", op.name(), name);
  return "";
}

// Is v within the values of d's representation (signed types sign-extended, unsigned zero-extended)?
bool int_fits(DType d, std::int64_t v) {
  int bits = dtype_bits(d);
  if (bits >= 64) return true;
  if (is_unsigned(d)) return v >= 0 && v < (std::int64_t{1} << bits);
  return v >= -(std::int64_t{1} << (bits - 1)) && v < (std::int64_t{1} << (bits - 1));
}

std::string constant_rule(const Op& op) {
  auto it = op.attrs.find("value");
  if (it == op.attrs.end()) return "constant needs a 'value' attribute";
  DType d = result_type(op).dtype;
  if (auto* i = std::get_if<std::int64_t>(&it->second)) {
    if (!is_int(d)) return fmt::format("integer constant with non-integer type {}", ty(op.results[0].get()));
    if (!int_fits(d, *i)) return fmt::format("constant {} does not fit in {}", *i, dtype_name(d));
    return "";
  }
  if (std::holds_alternative<double>(it->second)) {
    if (!is_float(d)) return fmt::format("float constant with non-float type {}", ty(op.results[0].get()));
    return "";
  }
  return "constant 'value' must be an integer or a float";
}

std::string index_rule(const Op& op) {
  if (auto p = int_attr_problem(op, "axis"); !p.empty()) return p;
  auto axis = op.int_attr("axis");
  if (axis < 0 || axis > 2) return fmt::format("axis must be 0, 1 or 2, got {}", axis);
  if (!same_type(result_type(op), Type::scalar(DType::I32))) return "result must be i32";
  return "";
}

std::string arange_rule(const Op& op) {
  if (auto p = int_attr_problem(op, "start"); !p.empty()) return p;
  if (auto p = int_attr_problem(op, "end"); !p.empty()) return p;
  // Its values are i32, as Triton's (and so end - start cannot overflow).
  for (const char* bound : {"start", "end"})
    if (!int_fits(DType::I32, op.int_attr(bound)))
      return fmt::format("arange {} = {} is out of the range of i32", bound, op.int_attr(bound));
  const std::int64_t n = op.int_attr("end") - op.int_attr("start");
  if (!is_pow2(n)) return fmt::format("arange size end - start = {} must be a positive power of two", n);
  const Type& t = result_type(op);
  if (t.dtype != DType::I32 || t.shape != std::vector<std::int64_t>{n})
    return fmt::format("arange result must be <{}xi32>, got {}", n, to_string(t));
  return "";
}

// reshape, trans {order}, join, split (ops.def); shape_rule has checked operand 0 and result 0
// have one element type.
std::string reshape_family_rule(const Op& op) {
  const Type& in = operand_type(op, 0);
  const Type& out = result_type(op);
  switch (op.kind) {
    case OpKind::Reshape:
      if (!in.is_tile() || !out.is_tile() || in.numel() != out.numel())
        return fmt::format("reshape must keep the number of elements: {} to {}", to_string(in), to_string(out));
      return "";
    case OpKind::Trans: {
      auto it = op.attrs.find("order");
      if (it == op.attrs.end() || !std::holds_alternative<std::vector<std::int64_t>>(it->second))
        return "'trans' needs an integer list attribute 'order'";
      const auto& order = std::get<std::vector<std::int64_t>>(it->second);
      if (!in.is_tile() || static_cast<int>(order.size()) != in.rank())
        return fmt::format("trans order [{}] does not fit {}", fmt::join(order, ", "), to_string(in));
      std::vector<std::int64_t> shape;
      std::vector<bool> seen(order.size(), false);
      for (auto d : order) {
        if (d < 0 || d >= in.rank() || seen[d]) return fmt::format("trans order [{}] is not a permutation", fmt::join(order, ", "));
        seen[d] = true;
        shape.push_back(in.shape[d]);
      }
      if (out.shape != shape) return fmt::format("trans result shape must be [{}], got {}", fmt::join(shape, "x"), to_string(out));
      return "";
    }
    case OpKind::Join: {
      const Type& b = operand_type(op, 1);
      if (!in.element().same_element_and_shape(b.element()) || in.shape != b.shape)
        return fmt::format("join operands differ: {} vs {}", to_string(in), to_string(b));
      auto shape = in.shape;
      shape.push_back(2);
      if (out.shape != shape) return fmt::format("join result shape must be [{}], got {}", fmt::join(shape, "x"), to_string(out));
      return "";
    }
    default: {  // Split
      if (!in.is_tile() || in.shape.back() != 2) return fmt::format("split needs a last dim of 2, got {}", to_string(in));
      auto shape = in.shape;
      shape.pop_back();
      for (const auto& r : op.results)
        if (!r->type.element().same_element_and_shape(in.element()) || r->type.shape != shape)
          return fmt::format("split results must have shape [{}] and the operand's element type, got {}",
                             fmt::join(shape, "x"), to_string(r->type));
      return "";
    }
  }
}

// gather {axis}(src, index): shape_rule has checked that src and the result share an element type.
std::string gather_rule(const Op& op) {
  if (auto p = int_attr_problem(op, "axis"); !p.empty()) return p;
  const Type& src = operand_type(op, 0);
  const Type& index = operand_type(op, 1);
  const std::int64_t axis = op.int_attr("axis");
  if (!src.is_tile() || axis < 0 || axis >= src.rank())
    return fmt::format("gather axis {} is out of range for {}", axis, to_string(src));
  if (!index.is_tile() || !is_int(index.dtype) || index.dtype == DType::I1 || index.rank() != src.rank())
    return fmt::format("gather index must be an integer tile of rank {}, got {}", src.rank(), to_string(index));
  for (int d = 0; d < src.rank(); ++d)
    if (d != axis && index.shape[d] != src.shape[d])
      return fmt::format("gather index {} differs from src {} in dim {} (only dim {} may differ)", to_string(index),
                         to_string(src), d, axis);
  if (result_type(op).shape != index.shape)
    return fmt::format("gather result must have the index's shape, got {}", to_string(result_type(op)));
  return "";
}

std::string shape_rule(const Op& op) {
  const Type& in = operand_type(op, 0);
  const Type& out = result_type(op);
  if (!in.element().same_element_and_shape(out.element()))
    return fmt::format("element types differ: {} to {}", to_string(in), to_string(out));
  switch (op.kind) {
    case OpKind::Splat:
      if (in.is_tile() || !out.is_tile()) return "splat takes a scalar to a tile";
      return "";
    case OpKind::Broadcast: {
      if (!in.is_tile() || in.rank() != out.rank())
        return fmt::format("broadcast needs a tile of the result's rank, got {} to {}", to_string(in), to_string(out));
      for (int d = 0; d < in.rank(); ++d)
        if (in.shape[d] != out.shape[d] && in.shape[d] != 1)
          return fmt::format("cannot broadcast dim {} of size {} to {}", d, in.shape[d], out.shape[d]);
      return "";
    }
    case OpKind::ExpandDims: {
      if (auto p = int_attr_problem(op, "axis"); !p.empty()) return p;
      auto axis = op.int_attr("axis");
      if (!in.is_tile() || axis < 0 || axis > in.rank())
        return fmt::format("expand_dims axis {} out of range for {}", axis, to_string(in));
      auto shape = in.shape;
      shape.insert(shape.begin() + axis, 1);
      if (out.shape != shape)
        return fmt::format("expand_dims result shape must be [{}], got {}", fmt::join(shape, "x"), to_string(out));
      return "";
    }
    case OpKind::Reshape:
    case OpKind::Trans:
    case OpKind::Join:
    case OpKind::Split: return reshape_family_rule(op);
    case OpKind::Gather: return gather_rule(op);
    default:  // ConvertLayout
      if (in.shape != out.shape) return fmt::format("convert_layout changes the shape: {} to {}", to_string(in), to_string(out));
      return "";
  }
}

std::string binary_rule(const Op& op) {
  if (auto p = elementwise_same(op); !p.empty()) return p;
  const Type& t = operand_type(op, 0);
  if (!same_type(result_type(op), t)) return fmt::format("result type {} differs from operand type {}", to_string(result_type(op)), to_string(t));
  if (t.is_ptr()) return fmt::format("'{}' does not apply to pointers (use addptr)", op.name());
  bool int_only = op.kind == OpKind::And || op.kind == OpKind::Or || op.kind == OpKind::Xor ||
                  op.kind == OpKind::Shl || op.kind == OpKind::Shr;
  if (int_only && !is_int(t.dtype)) return fmt::format("'{}' needs integer operands, got {}", op.name(), to_string(t));
  if (op.kind == OpKind::Pow && !is_float(t.dtype)) return fmt::format("'pow' needs float operands, got {}", to_string(t));
  if (auto r = op.attrs.find("rounding"); r != op.attrs.end()) {
    const auto* mode = std::get_if<std::string>(&r->second);
    if (op.kind != OpKind::Div || !mode || (*mode != "rn" && *mode != "approx"))
      return fmt::format("'{}' takes no 'rounding' attribute but div's \"rn\" or \"approx\"", op.name());
    if (*mode == "rn" && t.dtype != DType::F32 && t.dtype != DType::F64)
      return fmt::format("div {{rounding = \"rn\"}} needs f32 or f64 operands, got {}", to_string(t));
    if (*mode == "approx" && t.dtype != DType::F32)
      return fmt::format("div {{rounding = \"approx\"}} needs f32 operands, got {}", to_string(t));
  }
  return "";
}

// fma(a, b, c): three floats of one type, and the result of that type.
std::string fma_rule(const Op& op) {
  if (auto p = elementwise_same(op); !p.empty()) return p;
  const Type& t = operand_type(op, 0);
  if (!is_float(t.dtype) || t.is_ptr()) return fmt::format("'fma' needs float operands, got {}", to_string(t));
  if (!same_type(result_type(op), t)) return fmt::format("fma result must be {}, got {}", to_string(t), to_string(result_type(op)));
  return "";
}

// inline_asm {asm, constraints, pure, pack}(x...) -> (r...): ops.def.
std::string inline_asm_rule(const Op& op) {
  for (const char* name : {"asm", "constraints"})
    if (!op.has_attr(name) || !std::holds_alternative<std::string>(op.attrs.at(name)))
      return fmt::format("inline_asm needs a string attribute '{}'", name);
  for (const char* name : {"pure", "pack"})
    if (!op.has_attr(name) || !std::holds_alternative<std::int64_t>(op.attrs.at(name)))
      return fmt::format("inline_asm needs an integer attribute '{}'", name);
  std::vector<Type> operands, results;
  for (const Value* v : op.operands) operands.push_back(v->type);
  for (const auto& r : op.results) results.push_back(r->type);
  return inline_asm_problem(operands, results, op.string_attr("constraints"), op.int_attr("pack"));
}

// dot(a <MxK>, b <KxN>, acc <MxN>) -> acc's type; element types as ops.def says.
std::string dot_rule(const Op& op) {
  const Type &a = operand_type(op, 0), &b = operand_type(op, 1), &acc = operand_type(op, 2);
  if (a.rank() != 2 || b.rank() != 2 || acc.rank() != 2)
    return fmt::format("'dot' needs 2-D tiles, got {}, {} and {}", to_string(a), to_string(b), to_string(acc));
  // Either operand may be a view (ops.def "Shared memory"), shaped as tiles are.
  for (const Type* v : {&a, &b})
    if (v->shared)
      if (auto p = tile_shape_problem(v->shape, to_string(*v)); !p.empty()) return p;
  if (a.dtype != b.dtype)
    return fmt::format("'dot' needs operands of one element type, got {} and {}", to_string(a), to_string(b));
  const bool float_pair = (a.dtype == DType::F16 || a.dtype == DType::BF16 || a.dtype == DType::F32 || is_fp8(a.dtype)) &&
                          acc.dtype == DType::F32;
  const bool int_pair = a.dtype == DType::I8 && acc.dtype == DType::I32;
  if (!float_pair && !int_pair)
    return fmt::format("'dot' supports f8e4m3, f8e5m2, f16, bf16 or f32 operands with an f32 accumulator and i8 "
                       "operands with an i32 accumulator, got {} operands and a {} accumulator",
                       dtype_name(a.dtype), dtype_name(acc.dtype));
  const std::int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  if (b.shape[0] != k)
    return fmt::format("'dot' needs a's columns to match b's rows (K), got {} and {}", to_string(a), to_string(b));
  if (acc.shape[0] != m || acc.shape[1] != n)
    return fmt::format("'dot' accumulator must be {}x{}, got {}", m, n, to_string(acc));
  if (m < 16 || n < 16 || k < 16)
    return fmt::format("'dot' needs M, N and K of at least 16 (the smallest tensor-core tile), got M={} N={} K={}", m, n, k);
  if (!same_type(result_type(op), acc))
    return fmt::format("dot result must be {}, got {}", to_string(acc), to_string(result_type(op)));
  // f32 operands say how the tensor cores may multiply them (ops.def); no other type has a choice.
  auto precision = op.attrs.find("input_precision");
  const auto* p = precision == op.attrs.end() ? nullptr : std::get_if<std::string>(&precision->second);
  if (a.dtype == DType::F32 && !(p && (*p == "tf32" || *p == "tf32x3" || *p == "ieee")))
    return "'dot' of f32 operands needs input_precision = \"tf32\", \"tf32x3\" or \"ieee\"";
  if (a.dtype != DType::F32 && precision != op.attrs.end())
    return fmt::format("'dot' input_precision applies to f32 operands only, got {} operands", dtype_name(a.dtype));
  return "";
}

std::string compare_rule(const Op& op) {
  if (auto p = elementwise_same(op); !p.empty()) return p;
  if (!same_type(result_type(op), mask_like(operand_type(op, 0))))
    return fmt::format("compare result must be {}, got {}", to_string(mask_like(operand_type(op, 0))),
                       to_string(result_type(op)));
  return "";
}

std::string unary_rule(const Op& op) {
  const Type& in = operand_type(op, 0);
  const Type& out = result_type(op);
  if (op.kind == OpKind::Bitcast) return bitcast_problem(in, out);
  if (op.kind == OpKind::Assume) {
    for (const auto& [name, value] : op.attrs)
      if ((name != "contiguity" && name != "divisibility") || !std::holds_alternative<std::vector<std::int64_t>>(value))
        return fmt::format("assume takes integer-list attributes contiguity and divisibility only, got '{}'", name);
    if (!same_type(in, out)) return fmt::format("result type {} differs from operand type {}", to_string(out), to_string(in));
    return assume_problem(in, op.int_list_attr("contiguity"), op.int_list_attr("divisibility"));
  }
  if (in.is_ptr() || out.is_ptr()) return fmt::format("'{}' does not apply to pointers", op.name());
  if (op.kind == OpKind::Cast) {
    if (in.shape != out.shape || in.layout != out.layout)
      return fmt::format("cast changes the shape: {} to {}", to_string(in), to_string(out));
    if (!op.has_attr("rounding")) return "";
    if (!std::holds_alternative<std::string>(op.attrs.at("rounding")) || op.string_attr("rounding") != "rtz")
      return "cast's 'rounding' attribute is \"rtz\" (rounding to nearest even is the default)";
    if (!is_float_downcast(in.dtype, out.dtype))
      return fmt::format("cast {{rounding = \"rtz\"}} applies to float downcasts, not {} to {}", dtype_name(in.dtype),
                         dtype_name(out.dtype));
    return "";
  }
  if (!same_type(in, out)) return fmt::format("result type {} differs from operand type {}", to_string(out), to_string(in));
  bool float_only = op.kind != OpKind::Neg && op.kind != OpKind::Not && op.kind != OpKind::Abs;  // exp log sqrt and the math ops
  if (float_only && !is_float(in.dtype)) return fmt::format("'{}' needs a float operand, got {}", op.name(), to_string(in));
  if (op.kind == OpKind::Not && !is_int(in.dtype)) return fmt::format("'not' needs an integer operand, got {}", to_string(in));
  if (op.has_attr("ftz")) {  // exp/exp2 {ftz}: subnormal inputs and results may flush to zero (fast_expf, fast_exp2f)
    if ((op.kind != OpKind::Exp && op.kind != OpKind::Exp2) || in.dtype != DType::F32)
      return fmt::format("'ftz' applies to exp and exp2 of f32 only, not '{}' of {}", op.name(), to_string(in));
  }
  return "";
}

std::string select_rule(const Op& op) {
  const Type& c = operand_type(op, 0);
  const Type& a = operand_type(op, 1);
  if (!same_type(c, mask_like(a))) return fmt::format("select condition must be {}, got {}", to_string(mask_like(a)), to_string(c));
  if (!same_type(a, operand_type(op, 2))) return fmt::format("select operand types differ: {} vs {}", to_string(a), ty(op.operands[2]));
  if (!same_type(result_type(op), a)) return fmt::format("select result must be {}, got {}", to_string(a), to_string(result_type(op)));
  return "";
}

std::string addptr_rule(const Op& op) {
  const Type& p = operand_type(op, 0);
  const Type& off = operand_type(op, 1);
  if (!p.is_ptr()) return fmt::format("addptr needs a pointer, got {}", to_string(p));
  if (!is_int(off.dtype) || off.shape != p.shape)
    return fmt::format("addptr offset must be an integer of the pointer's shape, got {} for {}", to_string(off), to_string(p));
  if (!same_type(result_type(op), p)) return fmt::format("addptr result must be {}, got {}", to_string(p), to_string(result_type(op)));
  return "";
}

}  // namespace

std::string mask_problem(const Op& op, int i, const Type& ptr) {
  if (static_cast<int>(op.operands.size()) <= i) return "";
  const Type& m = operand_type(op, i);
  if (m.shared || m.dtype != DType::I1 || m.shape != ptr.shape)
    return fmt::format("mask must be i1 of the pointer's shape, got {} for {}", to_string(m), to_string(ptr));
  return "";
}

namespace {

std::string print_rule(const Op& op) {
  if (!op.has_attr("prefix") || !std::holds_alternative<std::string>(op.attrs.at("prefix")))
    return "print needs a string attribute 'prefix'";
  if (auto p = print_prefix_problem(op.string_attr("prefix")); !p.empty()) return p;
  if (op.has_attr("hex") && !std::holds_alternative<std::int64_t>(op.attrs.at("hex")))
    return "print's 'hex' attribute is an integer (0 or 1)";
  for (const Value* v : op.operands)
    if (auto p = print_operand_problem(v->type); !p.empty()) return p;
  return "";
}

std::string assert_rule(const Op& op) {
  if (!op.has_attr("message") || !std::holds_alternative<std::string>(op.attrs.at("message")))
    return "assert needs a string attribute 'message'";
  if (auto p = assert_message_problem(op.string_attr("message")); !p.empty()) return p;
  const Type& cond = operand_type(op, 0);
  if (cond.dtype != DType::I1) return fmt::format("assert needs an i1 condition, got {}", to_string(cond));
  return assert_condition_problem(cond);
}

std::string memory_rule(const Op& op) {
  if (op.kind == OpKind::AtomicRmw || op.kind == OpKind::AtomicCas) return atomic_rule_problem(op);
  if (op.kind == OpKind::DebugBarrier) return "";
  if (op.kind == OpKind::Print) return print_rule(op);
  if (op.kind == OpKind::Assert) return assert_rule(op);
  const Type& p = operand_type(op, 0);
  if (!p.is_ptr()) return fmt::format("'{}' needs a pointer, got {}", op.name(), to_string(p));
  const Type& v = op.kind == OpKind::Load ? result_type(op) : operand_type(op, 1);
  if (v.dtype != p.pointee || v.shape != p.shape)
    return fmt::format("'{}' value {} does not match the pointee of {}", op.name(), to_string(v), to_string(p));
  for (const char* hint : {"cache", "eviction"})
    if (op.has_attr(hint) && !std::holds_alternative<std::string>(op.attrs.at(hint)))
      return fmt::format("'{}' {} must be a string", op.name(), hint);
  const std::string cache = op.has_attr("cache") ? op.string_attr("cache") : "",
                    eviction = op.has_attr("eviction") ? op.string_attr("eviction") : "";
  if (auto h = access_hints_problem(op.kind == OpKind::Load, cache, eviction); !h.empty()) return h;
  int mask_index = op.kind == OpKind::Load ? 1 : 2;
  if (auto m = mask_problem(op, mask_index, p); !m.empty()) return m;
  if (op.kind == OpKind::Load && op.operands.size() == 3 && !same_type(operand_type(op, 2), v))
    return fmt::format("load 'other' must be {}, got {}", to_string(v), ty(op.operands[2]));
  return "";
}

// The yield ending `region` must carry exactly `types`.
std::string yield_problem(const Op& op, int region, const std::vector<const Type*>& types) {
  const Op& y = *op.regions[region]->block->terminator();
  if (y.operands.size() != types.size())
    return fmt::format("region #{} yields {} value(s), expected {}", region, y.operands.size(), types.size());
  for (std::size_t i = 0; i < types.size(); ++i)
    if (!same_type(y.operands[i]->type, *types[i]))
      return fmt::format("region #{} yields {} at position {}, expected {}", region, ty(y.operands[i]), i, to_string(*types[i]));
  return "";
}

std::string for_rule(const Op& op) {
  const Type& iv = operand_type(op, 0);
  if (iv.is_tile() || !is_int(iv.dtype) || iv.dtype == DType::I1)
    return fmt::format("for bounds must be scalar integers, got {}", to_string(iv));
  for (int i = 1; i < 3; ++i)
    if (!same_type(operand_type(op, i), iv)) return fmt::format("for bounds differ in type: {} vs {}", to_string(iv), ty(op.operands[i]));
  std::size_t carried = op.operands.size() - 3;
  if (op.results.size() != carried) return fmt::format("for carries {} value(s) but has {} result(s)", carried, op.results.size());
  const Block& body = *op.regions[0]->block;
  if (body.args.size() != carried + 1)
    return fmt::format("for body must have {} block arguments (iv, carried...), got {}", carried + 1, body.args.size());
  if (!same_type(body.args[0]->type, iv)) return fmt::format("induction variable must be {}, got {}", to_string(iv), to_string(body.args[0]->type));
  if (auto it = op.attrs.find("num_stages"); it != op.attrs.end()) {  // LoopOptions (control.hpp)
    const auto* n = std::get_if<std::int64_t>(&it->second);
    if (!n || *n < 1 || *n > 8) return "for's num_stages must be an integer from 1 to 8";
  }
  std::vector<const Type*> types;
  for (std::size_t i = 0; i < carried; ++i) {
    const Type& t = operand_type(op, static_cast<int>(3 + i));
    if (!same_type(body.args[i + 1]->type, t) || !same_type(op.results[i]->type, t))
      return fmt::format("carried value #{} is {} but its block argument is {} and its result {}", i, to_string(t),
                         to_string(body.args[i + 1]->type), to_string(op.results[i]->type));
    types.push_back(&t);
  }
  return yield_problem(op, 0, types);
}

// do_while: block args, results and inits of one type each; the yield gives (cond i1, next...).
std::string do_while_rule(const Op& op) {
  const std::size_t carried = op.operands.size();
  if (op.results.size() != carried)
    return fmt::format("do_while carries {} value(s) but has {} result(s)", carried, op.results.size());
  const Block& body = *op.regions[0]->block;
  if (body.args.size() != carried)
    return fmt::format("do_while body must have {} block argument(s) (the carried values), got {}", carried, body.args.size());
  const Type cond = Type::scalar(DType::I1);
  std::vector<const Type*> types{&cond};
  for (std::size_t i = 0; i < carried; ++i) {
    const Type& t = operand_type(op, static_cast<int>(i));
    if (!same_type(body.args[i]->type, t) || !same_type(op.results[i]->type, t))
      return fmt::format("carried value #{} is {} but its block argument is {} and its result {}", i, to_string(t),
                         to_string(body.args[i]->type), to_string(op.results[i]->type));
    types.push_back(&t);
  }
  return yield_problem(op, 0, types);
}

std::string if_rule(const Op& op) {
  if (!same_type(operand_type(op, 0), Type::scalar(DType::I1)))
    return fmt::format("if condition must be a scalar i1, got {}", ty(op.operands[0]));
  std::vector<const Type*> types;
  for (const auto& r : op.results) types.push_back(&r->type);
  for (int i = 0; i < 2; ++i) {
    if (!op.regions[i]->block->args.empty()) return fmt::format("if region #{} must have no block arguments", i);
    if (auto p = yield_problem(op, i, types); !p.empty()) return p;
  }
  return "";
}

// reduce/scan: N tiles of one shape, an axis inside it, a region over (lhs..., rhs...) scalars
// yielding N scalars of the same element types, and results without the axis (reduce) or with the
// operands' types (scan).
std::string reduce_rule(const Op& op) {
  if (auto p = int_attr_problem(op, "axis"); !p.empty()) return p;
  const Type& first = operand_type(op, 0);
  const std::int64_t axis = op.int_attr("axis");
  if (!first.is_tile() || axis < 0 || axis >= first.rank())
    return fmt::format("axis {} is out of range for {}", axis, to_string(first));
  const std::size_t n = op.operands.size();
  if (op.results.size() != n) return fmt::format("'{}' of {} operand(s) has {} result(s)", op.name(), n, op.results.size());
  const Block& body = *op.regions[0]->block;
  if (body.args.size() != 2 * n)
    return fmt::format("'{}' region must have {} scalar block arguments (lhs..., rhs...), got {}", op.name(), 2 * n, body.args.size());
  std::vector<Type> elems;
  for (std::size_t i = 0; i < n; ++i) {
    const Type& t = operand_type(op, static_cast<int>(i));
    if (t.shape != first.shape) return fmt::format("'{}' operands differ in shape: {} vs {}", op.name(), to_string(first), to_string(t));
    elems.push_back(t.element());
    if (!same_type(body.args[i]->type, elems.back()) || !same_type(body.args[i + n]->type, elems.back()))
      return fmt::format("'{}' block arguments for operand #{} must be {}", op.name(), i, to_string(elems.back()));
    Type want = t;
    if (op.kind == OpKind::Reduce) {
      want.shape.erase(want.shape.begin() + axis);
      want.layout = op.results[i]->type.layout;
    }
    if (want.dtype != op.results[i]->type.dtype || want.shape != op.results[i]->type.shape)
      return fmt::format("'{}' result #{} must be {}, got {}", op.name(), i, to_string(want), to_string(op.results[i]->type));
  }
  std::vector<const Type*> types;
  for (const auto& e : elems) types.push_back(&e);
  return yield_problem(op, 0, types);
}

}  // namespace

std::string type_rule_problem(const Op& op) {
  if (is_shared_memory_op(op.kind)) return shared_memory_rule(op);
  switch (op.info().category) {
    case OpCategory::Binary: return binary_rule(op);
    case OpCategory::Compare: return compare_rule(op);
    case OpCategory::Unary: return unary_rule(op);
    case OpCategory::Shape: return shape_rule(op);
    case OpCategory::Memory: return memory_rule(op);
    default: break;
  }
  switch (op.kind) {
    case OpKind::Constant: return constant_rule(op);
    case OpKind::ProgramId:
    case OpKind::NumPrograms: return index_rule(op);
    case OpKind::Arange: return arange_rule(op);
    case OpKind::Select: return select_rule(op);
    case OpKind::Fma: return fma_rule(op);
    case OpKind::Dot: return dot_rule(op);
    case OpKind::InlineAsm: return inline_asm_rule(op);
    case OpKind::AddPtr: return addptr_rule(op);
    case OpKind::For: return for_rule(op);
    case OpKind::If: return if_rule(op);
    case OpKind::DoWhile: return do_while_rule(op);
    case OpKind::Reduce:
    case OpKind::Scan: return reduce_rule(op);
    case OpKind::Yield:
    case OpKind::Return: return "";  // placement and arity: the structural checks and for/if rules
    default: return fmt::format("no type rule for op '{}'", op.name());
  }
}

}  // namespace tessera::ir

// The verifier's type rule of atomic_rmw and atomic_cas (ops.def): which element types each
// operation supports is decided here once, and the DSL, interpreter and lowering rely on it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <string_view>

#include "jit/ir/verifier.hpp"
#include "jit/ir/verifier_rules.hpp"

namespace tessera::ir {
namespace {

// The value of string attribute `name` if it is one of `allowed`; else a problem in `problem`.
template <std::size_t N>
std::string_view string_attr(const Op& op, const char* name, const std::array<std::string_view, N>& allowed,
                             std::string& problem) {
  auto it = op.attrs.find(name);
  const auto* s = it == op.attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
  if (s)
    for (std::string_view a : allowed)
      if (*s == a) return a;
  problem = fmt::format("'{}' needs a string attribute '{}', one of: {}", op.name(), name, fmt::join(allowed, " "));
  return {};
}

bool is_32_or_64(DType d) { return d == DType::I32 || d == DType::U32 || d == DType::I64 || d == DType::U64; }
bool is_wide_float(DType d) { return d == DType::F32 || d == DType::F64; }

bool same_shape_and_layout(const Type& a, const Type& b) { return a.shape == b.shape && a.layout == b.layout; }

}  // namespace

// Element types per operation: what NVPTX and AMDGPU do natively or by a compare-and-swap loop.
// f16/bf16 only add (sm_90 has atom.add.noftz.{f16,bf16}); cas on floats compares bit patterns.
bool atomic_supports(std::string_view op, DType d) {
  if (op == "and" || op == "or") return is_32_or_64(d);
  if (op == "add") return is_32_or_64(d) || is_wide_float(d) || d == DType::F16 || d == DType::BF16;
  return is_32_or_64(d) || is_wide_float(d);  // max min xchg cas
}

std::string atomic_rule_problem(const Op& op) {
  static constexpr std::array<std::string_view, 6> ops{"add", "max", "min", "and", "or", "xchg"};
  static constexpr std::array<std::string_view, 4> sems{"relaxed", "acquire", "release", "acq_rel"};
  static constexpr std::array<std::string_view, 3> scopes{"cta", "gpu", "sys"};
  std::string problem;
  const bool cas = op.kind == OpKind::AtomicCas;
  const std::string_view kind = cas ? std::string_view("cas") : string_attr(op, "op", ops, problem);
  if (!problem.empty()) return problem;
  string_attr(op, "sem", sems, problem);
  if (!problem.empty()) return problem;
  string_attr(op, "scope", scopes, problem);
  if (!problem.empty()) return problem;

  const Type& p = op.operands[0]->type;
  if (!p.is_ptr()) return fmt::format("'{}' needs a pointer, got {}", op.name(), to_string(p));
  if (!atomic_supports(kind, p.pointee))
    return fmt::format("atomic {} does not support {} elements", kind, dtype_name(p.pointee));
  const int values = cas ? 2 : 1;
  for (int i = 1; i <= values; ++i) {
    const Type& v = op.operands[i]->type;
    if (v.dtype != p.pointee || !same_shape_and_layout(v, p))
      return fmt::format("'{}' operand #{} {} does not match the pointee of {}", op.name(), i, to_string(v),
                         to_string(p));
  }
  if (!cas && op.operands.size() == 3) {
    const Type& m = op.operands[2]->type;
    if (m.dtype != DType::I1 || !same_shape_and_layout(m, p))
      return fmt::format("mask must be i1 of the pointer's shape, got {} for {}", to_string(m), to_string(p));
  }
  const Type& r = op.results[0]->type;
  if (r.dtype != p.pointee || !same_shape_and_layout(r, p))
    return fmt::format("'{}' result must be the pointee of {} in its shape and layout, got {}", op.name(),
                       to_string(p), to_string(r));
  return "";
}

}  // namespace tessera::ir

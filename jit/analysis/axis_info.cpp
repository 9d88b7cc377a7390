#include "jit/analysis/axis_info.hpp"

#include <algorithm>
#include <numeric>

#include "jit/analysis/shared_memory.hpp"
#include "tessera/error.hpp"

namespace tessera::analysis {
using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {
using I = std::int64_t;

int dims_of(const Value* v) { return std::max(1, v->type.rank()); }
I dim_size(const Value* v, int d) { return v->type.is_tile() ? v->type.shape[d] : 1; }

// Knows nothing: runs of one, divisible by one, constant over runs of one.
AxisInfo unknown(const Value* v) {
  int n = dims_of(v);
  return {std::vector<I>(n, 1), std::vector<I>(n, 1), std::vector<I>(n, 1)};
}

// Every element equal to a value divisible by `div`.
AxisInfo uniform(const Value* v, I div) {
  AxisInfo a = unknown(v);
  for (int d = 0; d < dims_of(v); ++d) {
    a.divisibility[d] = div;
    a.constancy[d] = dim_size(v, d);
  }
  return a;
}

I cap(I x) { return std::min(x, AxisInfoAnalysis::kMaxDivisibility); }
}  // namespace

I AxisInfoAnalysis::pow2_divisor(I x) {
  if (x == 0) return kMaxDivisibility;
  const auto u = static_cast<std::uint64_t>(x);  // -x overflows for INT64_MIN; 0 - u does not
  return static_cast<I>(std::min<std::uint64_t>(u & (0 - u), kMaxDivisibility));
}

AxisInfoAnalysis::AxisInfoAnalysis(const ir::Module& m) {
  const auto& args = m.entry().args;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& facts = i < m.arg_facts.size() ? m.arg_facts[i] : ir::ArgFacts{};
    // A fact may be any positive number: keep its largest power-of-two divisor (every entry here is
    // a power of two), capped as every other, so that products of two (mul, addptr) fit int64.
    info_[args[i].get()] = uniform(args[i].get(), facts.equal_to_one ? 1 : pow2_divisor(facts.divisibility));
  }
  std::unordered_map<const Op*, int> writes;  // buffer -> ops that write it
  ir::walk(const_cast<ir::Block&>(m.entry()), [&](const Op& op) {
    if (op.kind != OpKind::LocalStore && op.kind != OpKind::AsyncCopy) return;
    const Op* buffer = shared_buffer_of(op.operands[0]);
    if (++writes[buffer] == 1 && op.kind == OpKind::LocalStore) sole_store_[buffer] = &op;
    else sole_store_.erase(buffer);
  });
  visit_block(m.entry());
}

const AxisInfo& AxisInfoAnalysis::get(const Value* v) const {
  auto it = info_.find(v);
  if (it == info_.end()) throw InternalError("axis info: value without information (analysis not run on its block?)");
  return it->second;
}

void AxisInfoAnalysis::visit_block(const ir::Block& b) {
  for (const auto& op : b.ops) visit_op(*op);
}

void AxisInfoAnalysis::visit_op(const Op& op) {
  if (op.kind == OpKind::For) {
    // Induction variable: lb + k*step, so divisible by gcd(div(lb), div(step)); carried values
    // change between iterations, so nothing is known of them.
    const auto& body = *op.regions[0]->block;
    I iv_div = std::gcd(get(op.operands[0]).div(0), get(op.operands[2]).div(0));
    info_[body.args[0].get()] = uniform(body.args[0].get(), iv_div);
    for (std::size_t i = 1; i < body.args.size(); ++i) info_[body.args[i].get()] = unknown(body.args[i].get());
  }
  if (op.kind == OpKind::Reduce || op.kind == OpKind::Scan || op.kind == OpKind::DoWhile)
    for (const auto& a : op.regions[0]->block->args) info_[a.get()] = unknown(a.get());
  for (const auto& r : op.regions) visit_block(*r->block);
  // Shape ops move elements to other dims (split has two results): nothing carries over.
  const bool moves = op.kind == OpKind::Reshape || op.kind == OpKind::Trans || op.kind == OpKind::Join ||
                     op.kind == OpKind::Split || op.kind == OpKind::Gather;
  if (moves || op.kind == OpKind::For || op.kind == OpKind::If || op.kind == OpKind::DoWhile || op.kind == OpKind::Reduce ||
      op.kind == OpKind::Scan) {
    for (const auto& r : op.results) info_[r.get()] = unknown(r.get());
    return;
  }
  if (op.results.size() == 1) info_[op.result()] = transfer(op);
}

AxisInfo AxisInfoAnalysis::transfer(const Op& op) const {
  const Value* res = op.result();
  const int n = dims_of(res);
  auto operand = [&](int i) -> const AxisInfo& { return get(op.operands[i]); };
  // Any pure elementwise function of its operands is constant where all of them are.
  auto elementwise_default = [&] {
    AxisInfo a = unknown(res);
    for (int d = 0; d < n; ++d) {
      I c = dim_size(res, d);
      for (auto* v : op.operands) c = std::gcd(c, get(v).cnst(std::min(d, dims_of(v) - 1)));
      a.constancy[d] = c;
    }
    return a;
  };

  switch (op.kind) {
    case OpKind::Constant: {
      const auto& attr = op.attrs.at("value");
      I div = std::holds_alternative<I>(attr) ? pow2_divisor(std::get<I>(attr)) : 1;
      return uniform(res, div);
    }
    case OpKind::ProgramId:
    case OpKind::NumPrograms:
      return uniform(res, 1);
    case OpKind::Arange: {
      AxisInfo a = unknown(res);
      a.contiguity[0] = res->type.shape[0];
      a.divisibility[0] = pow2_divisor(op.int_attr("start"));
      return a;
    }
    case OpKind::Splat:
      return uniform(res, operand(0).div(0));
    case OpKind::Broadcast: {
      // A dim broadcast from size 1 repeats one value along it.
      AxisInfo a = operand(0);
      const Value* src = op.operands[0];
      for (int d = 0; d < n; ++d)
        if (src->type.shape[d] == 1 && res->type.shape[d] != 1) {
          a.contiguity[d] = 1;
          a.constancy[d] = res->type.shape[d];
        }
      return a;
    }
    case OpKind::ExpandDims: {
      AxisInfo a = operand(0);
      if (!op.operands[0]->type.is_tile()) a = unknown(op.operands[0]);
      auto axis = static_cast<std::size_t>(op.int_attr("axis"));
      // Along the new dim every element is one of the operand's values, and a contiguous run's
      // divisibility speaks only of its first element ([2^n, 2^n + 1, ...] divides by 1), as in
      // Triton's ExpandDims rule. Taking the run's divisibility instead claimed 16-byte vectors
      // for x + rows[:, None] * stride with an odd stride (misaligned; found by the host target).
      I div = AxisInfoAnalysis::kMaxDivisibility;
      for (std::size_t d = 0; d < a.divisibility.size(); ++d) div = std::min(div, a.contiguity[d] > 1 ? I{1} : a.divisibility[d]);
      if (!op.operands[0]->type.is_tile()) a = AxisInfo{{}, {}, {}};
      a.contiguity.insert(a.contiguity.begin() + axis, 1);
      a.divisibility.insert(a.divisibility.begin() + axis, div);
      a.constancy.insert(a.constancy.begin() + axis, 1);
      return a;
    }
    case OpKind::ConvertLayout:
      return operand(0);
    case OpKind::LocalLoad: {
      auto store = sole_store_.find(shared_buffer_of(op.operands[0]));
      if (store == sole_store_.end() || !info_.count(store->second->operands[1])) return unknown(res);
      return get(store->second->operands[1]);
    }
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::AddPtr: {
      // (a + b) is contiguous where one side is contiguous and the other constant; its runs start
      // at values divisible by the gcd of both sides' divisibility (b scaled to bytes for pointers).
      const AxisInfo& a = operand(0);
      const AxisInfo& b = operand(1);
      I scale = op.kind == OpKind::AddPtr ? ir::dtype_bytes(res->type.pointee) : 1;
      AxisInfo r = unknown(res);
      for (int d = 0; d < n; ++d) {
        I c = std::min(a.contig(d), b.cnst(d));
        if (op.kind != OpKind::Sub) c = std::max(c, std::min(a.cnst(d), b.contig(d)));
        r.contiguity[d] = c;
        r.divisibility[d] = std::gcd(a.div(d), cap(b.div(d) * scale));
        r.constancy[d] = std::gcd(a.cnst(d), b.cnst(d));
      }
      return r;
    }
    case OpKind::Mul: {
      const AxisInfo& a = operand(0);
      const AxisInfo& b = operand(1);
      AxisInfo r = elementwise_default();
      for (int d = 0; d < n; ++d) r.divisibility[d] = cap(a.div(d) * b.div(d));
      return r;
    }
    case OpKind::And: {
      AxisInfo r = elementwise_default();
      for (int d = 0; d < n; ++d) r.divisibility[d] = std::max(operand(0).div(d), operand(1).div(d));
      return r;
    }
    case OpKind::CmpLt:
    case OpKind::CmpGe:
    case OpKind::CmpGt:
    case OpKind::CmpLe: {
      // x < c (and x >= c) over a contiguous x flips only where x == c; inside an aligned group of
      // g = gcd(contig(x), div(x), div(c)) elements that cannot happen, so the result is constant
      // over such groups. For c > x and c <= x the same holds with the operands swapped.
      AxisInfo r = elementwise_default();
      bool lhs_contig = op.kind == OpKind::CmpLt || op.kind == OpKind::CmpGe;
      const AxisInfo& x = operand(lhs_contig ? 0 : 1);
      const AxisInfo& c = operand(lhs_contig ? 1 : 0);
      for (int d = 0; d < n; ++d) {
        I g = std::gcd(std::gcd(x.contig(d), x.div(d)), std::gcd(c.div(d), c.cnst(d)));
        r.constancy[d] = std::max(r.constancy[d], std::min(g, dim_size(res, d)));
      }
      return r;
    }
    case OpKind::Min:
    case OpKind::Max: {
      // Every element is one of its two operands' (a clamped block start, min(start + B, n - B),
      // stays a multiple of what both are multiples of). A contiguous operand's divisibility
      // speaks of its runs' first elements only, so it contributes 1.
      AxisInfo r = elementwise_default();
      auto element_div = [&](int i, int d) { return operand(i).contig(d) > 1 ? I{1} : operand(i).div(d); };
      for (int d = 0; d < n; ++d) r.divisibility[d] = std::gcd(element_div(0, d), element_div(1, d));
      return r;
    }
    case OpKind::Select: {
      AxisInfo r = elementwise_default();
      const AxisInfo& c = operand(0);
      const AxisInfo& a = operand(1);
      const AxisInfo& b = operand(2);
      for (int d = 0; d < n; ++d) {
        r.contiguity[d] = std::min({c.cnst(d), a.contig(d), b.contig(d)});
        r.divisibility[d] = std::gcd(a.div(d), b.div(d));
      }
      return r;
    }
    case OpKind::Cast: {
      // Widening an int keeps every fact; anything else keeps only constancy.
      const Value* src = op.operands[0];
      if (ir::is_int(src->type.dtype) && ir::is_int(res->type.dtype) &&
          ir::dtype_bits(res->type.dtype) >= ir::dtype_bits(src->type.dtype) && src->type.dtype != ir::DType::I1)
        return operand(0);
      return elementwise_default();
    }
    case OpKind::Bitcast: {
      // A pointer keeps its address: divisibility (in bytes) and constancy hold, and contiguity (in
      // elements) holds while the pointee keeps its size. Numbers under another type keep only
      // constancy (i32 -1, 0 are consecutive; u32 0xffffffff, 0 are not).
      if (!res->type.is_ptr()) return elementwise_default();
      AxisInfo r = operand(0);
      if (ir::dtype_bytes(res->type.pointee) != ir::dtype_bytes(op.operands[0]->type.pointee))
        std::fill(r.contiguity.begin(), r.contiguity.end(), 1);
      return r;
    }
    case OpKind::Assume: {
      // The user's promise replaces what it states, as Triton's hints do (ops.def `assume`); a
      // divisibility keeps its largest power-of-two divisor. A run of consecutive values has no
      // two equal elements, so a promised contiguity leaves constancy 1 along its dim.
      AxisInfo r = operand(0);
      if (const auto* c = op.int_list_attr("contiguity"))
        for (int d = 0; d < n; ++d) {
          r.contiguity[d] = (*c)[d];
          if ((*c)[d] > 1) r.constancy[d] = 1;
        }
      if (const auto* div = op.int_list_attr("divisibility"))
        for (int d = 0; d < n; ++d) r.divisibility[d] = pow2_divisor((*div)[d]);
      return r;
    }
    case OpKind::AtomicRmw:
    case OpKind::AtomicCas:
      return unknown(res);  // old values differ per lane even where every operand is constant
    default:
      return elementwise_default();
  }
}

}  // namespace tessera::analysis

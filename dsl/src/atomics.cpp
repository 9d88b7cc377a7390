// The DSL's atomics as IR: operands broadcast to one shape (numpy rules, as for store), values
// cast to the pointee, and unsupported element types reported at the user's line.
#include <fmt/format.h>

#include "dsl/src/trace_state.hpp"
#include "jit/ir/verifier.hpp"
#include "tessera/atomics.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {
namespace {

using ir::OpKind;

const char* op_name(AtomicOp op) {
  switch (op) {
    case AtomicOp::Add: return "add";
    case AtomicOp::Max: return "max";
    case AtomicOp::Min: return "min";
    case AtomicOp::And: return "and";
    case AtomicOp::Or: return "or";
    case AtomicOp::Xchg: return "xchg";
    case AtomicOp::Cas: return "cas";
  }
  throw InternalError("unknown atomic op");
}

const char* sem_name(Sem s) {
  switch (s) {
    case Sem::Relaxed: return "relaxed";
    case Sem::Acquire: return "acquire";
    case Sem::Release: return "release";
    case Sem::AcqRel: return "acq_rel";
  }
  throw InternalError("unknown memory semantics");
}

const char* scope_name(tessera::Scope s) {
  switch (s) {
    case tessera::Scope::Cta: return "cta";
    case tessera::Scope::Gpu: return "gpu";
    case tessera::Scope::Sys: return "sys";
  }
  throw InternalError("unknown atomic scope");
}

// Equal ranks with equal dims or a dim of 1, or a scalar (numpy rules, as ops.cpp applies them).
Shape broadcast_shape(const Shape& a, const Shape& b, const std::string& what, const Loc& loc) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  bool ok = a.size() == b.size();
  Shape r(a.size());
  for (std::size_t i = 0; ok && i < a.size(); ++i) {
    ok = a[i] == b[i] || a[i] == 1 || b[i] == 1;
    r[i] = a[i] == 1 ? b[i] : a[i];
  }
  if (!ok) program_error(loc, fmt::format("shape mismatch in '{}': {} vs {}", what, shape_str(a), shape_str(b)));
  check_tile_shape(r, fmt::format("'{}' of {} and {}", what, shape_str(a), shape_str(b)), loc);
  return r;
}

ir::Value* broadcast(ir::Builder& b, ir::Value* v, const Shape& shape) {
  if (v->type.shape == shape) return v;
  if (!v->type.is_tile()) return b.create1(OpKind::Splat, {v}, v->type.with_shape(shape));
  return b.create1(OpKind::Broadcast, {v}, v->type.with_shape(shape));
}

ir::Value* as_pointee(ir::Builder& b, ir::Value* v, DType d, const Shape& shape) {
  if (v->type.dtype != d) v = b.create1(OpKind::Cast, {v}, v->type.with_dtype(d));
  return broadcast(b, v, shape);
}

void check(AtomicOp op, const ir::Value* ptr, const std::string& what, const Loc& loc) {
  if (!ptr->type.is_ptr()) program_error(loc, fmt::format("{} needs a pointer", what));
  // The verifier's table, for callers that reach here without atomics.hpp's static_asserts.
  if (!ir::atomic_supports(op_name(op), ptr->type.pointee))
    program_error(loc, fmt::format("{} does not support {} elements", what, ir::dtype_name(ptr->type.pointee)));
}

std::map<std::string, ir::Attr> attrs(Sem sem, tessera::Scope scope) {
  return {{"sem", std::string(sem_name(sem))}, {"scope", std::string(scope_name(scope))}};
}

}  // namespace

ir::Value* emit_atomic_rmw(AtomicOp op, ir::Value* ptr, ir::Value* val, ir::Value* mask, Sem sem,
                           tessera::Scope scope, const Loc& loc) {
  const std::string what = fmt::format("atomic_{}", op_name(op));
  if (op == AtomicOp::Cas) throw InternalError("emit_atomic_rmw called for cas");
  check(op, ptr, what, loc);
  Shape shape = broadcast_shape(ptr->type.shape, val->type.shape, what, loc);
  if (mask) shape = broadcast_shape(shape, mask->type.shape, what, loc);
  ir::Builder& b = builder_at(loc);
  const DType d = ptr->type.pointee;
  std::vector<ir::Value*> operands{broadcast(b, ptr, shape), as_pointee(b, val, d, shape)};
  if (mask) operands.push_back(broadcast(b, mask, shape));
  auto a = attrs(sem, scope);
  a["op"] = std::string(op_name(op));
  return b.create1(OpKind::AtomicRmw, operands, ir::Type::scalar(d).with_shape(shape), std::move(a));
}

ir::Value* emit_atomic_cas(ir::Value* ptr, ir::Value* cmp, ir::Value* val, Sem sem, tessera::Scope scope,
                           const Loc& loc) {
  check(AtomicOp::Cas, ptr, "atomic_cas", loc);
  Shape shape = broadcast_shape(ptr->type.shape, cmp->type.shape, "atomic_cas", loc);
  shape = broadcast_shape(shape, val->type.shape, "atomic_cas", loc);
  ir::Builder& b = builder_at(loc);
  const DType d = ptr->type.pointee;
  std::vector<ir::Value*> operands{broadcast(b, ptr, shape), as_pointee(b, cmp, d, shape), as_pointee(b, val, d, shape)};
  return b.create1(OpKind::AtomicCas, operands, ir::Type::scalar(d).with_shape(shape), attrs(sem, scope));
}

}  // namespace tessera::detail

// The verifier's rules for the shared-memory ops of ops.def ("Shared memory"): local_alloc,
// smem_index, smem_trans, local_store, local_load, async_copy, async_commit, async_wait, fence_async_shared.
#include <fmt/format.h>

#include "jit/ir/verifier_rules.hpp"

namespace tessera::ir {
namespace {

std::string ty(const Value* v) { return to_string(v->type); }

std::string need_buffer(const Op& op, int i) {
  if (!op.operands[i]->type.shared)
    return fmt::format("'{}' operand #{} must be a shared buffer (!smem<...>), got {}", op.name(), i, ty(op.operands[i]));
  return "";
}

// A tile `t` that is exactly what view `v` holds: its shape and element type.
std::string matches_view(const Op& op, const Type& view, const Type& t, const char* what) {
  if (!t.is_tile() || t.is_ptr() || t.dtype != view.dtype || t.shape != view.shape)
    return fmt::format("'{}' {} must be a tile of {}'s shape and element type, got {}", op.name(), what, to_string(view),
                       to_string(t));
  return "";
}

// Buffers are written, and staged, only through views smem_index makes: a transposed view is read-only.
std::string need_writable(const Op& op) {
  if (const Op* def = op.operands[0]->def; def && def->kind == OpKind::SmemTrans)
    return fmt::format("'{}' takes a view smem_trans made, which only dots and local_load read", op.name());
  return "";
}

std::string smem_index_rule(const Op& op) {
  if (auto p = need_buffer(op, 0); !p.empty()) return p;
  if (auto p = need_writable(op); !p.empty()) return p;
  const Type& buf = op.operands[0]->type;
  const Type& slot = op.operands[1]->type;
  if (slot.is_tile() || slot.shared || slot.dtype != DType::I32)
    return fmt::format("smem_index slot must be an i32 scalar, got {}", to_string(slot));
  if (buf.rank() < 2)
    return fmt::format("smem_index needs a buffer whose leading dim counts stages (2 dims or more), got {}", to_string(buf));
  Type want = buf;
  want.shape.erase(want.shape.begin());
  if (!same_type(op.result()->type, want))
    return fmt::format("smem_index of {} must give {}, got {}", to_string(buf), to_string(want), ty(op.result()));
  return "";
}

// smem_trans: a 2-D view (not a whole buffer of stages) read the other way round.
std::string smem_trans_rule(const Op& op) {
  if (auto p = need_buffer(op, 0); !p.empty()) return p;
  const Type& view = op.operands[0]->type;
  if (view.rank() != 2) return fmt::format("smem_trans needs a 2-D view, got {}", to_string(view));
  Type want = view;
  want.shape = {view.shape[1], view.shape[0]};
  want.encoding.transposed = !view.encoding.transposed;
  if (!same_type(op.result()->type, want))
    return fmt::format("smem_trans of {} must give {}, got {}", to_string(view), to_string(want), ty(op.result()));
  return "";
}

std::string async_copy_rule(const Op& op) {
  if (auto p = need_buffer(op, 0); !p.empty()) return p;
  if (auto p = need_writable(op); !p.empty()) return p;
  const Type& view = op.operands[0]->type;
  const Type& ptrs = op.operands[1]->type;
  if (!ptrs.is_tile() || !ptrs.is_ptr() || ptrs.pointee != view.dtype || ptrs.shape != view.shape)
    return fmt::format("async_copy pointers must be a tile of ptr<{}> of {}'s shape, got {}", ir::dtype_name(view.dtype),
                       to_string(view), to_string(ptrs));
  return mask_problem(op, 2, ptrs);
}

}  // namespace

std::string shared_memory_rule(const Op& op) {
  switch (op.kind) {
    case OpKind::LocalAlloc:
      if (!op.result()->type.shared) return fmt::format("local_alloc must make a shared buffer, got {}", ty(op.result()));
      // One buffer per program for the whole kernel, as the lowering gives it bytes once.
      if (parent_op(op)) return "local_alloc must be at the kernel's top level, not inside a loop or branch";
      return "";
    case OpKind::SmemIndex: return smem_index_rule(op);
    case OpKind::SmemTrans: return smem_trans_rule(op);
    case OpKind::LocalStore:
      if (auto p = need_buffer(op, 0); !p.empty()) return p;
      if (auto p = need_writable(op); !p.empty()) return p;
      return matches_view(op, op.operands[0]->type, op.operands[1]->type, "value");
    case OpKind::LocalLoad:
      if (auto p = need_buffer(op, 0); !p.empty()) return p;
      return matches_view(op, op.operands[0]->type, op.result()->type, "result");
    case OpKind::AsyncCopy: return async_copy_rule(op);
    case OpKind::AsyncWait: {
      const Attr* a = op.has_attr("pending") ? &op.attrs.at("pending") : nullptr;
      if (!a || !std::holds_alternative<std::int64_t>(*a) || std::get<std::int64_t>(*a) < 0)
        return "async_wait needs {pending = N}, N >= 0: how many of the newest groups may still be in flight";
      return "";
    }
    case OpKind::AsyncCommit:
    case OpKind::FenceAsyncShared: return "";
    default: return fmt::format("'{}' is not a shared-memory op", op.name());
  }
}

}  // namespace tessera::ir

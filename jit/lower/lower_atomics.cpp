// atomic_rmw and atomic_cas to LLVM atomicrmw / cmpxchg.
//
// A blocked layout replicates a tile smaller than its CTA tile: several threads hold the same
// element. Harmless for a store (the copies write the same value), wrong for an atomic (each copy
// would apply it again). So exactly one thread per element, its owner, performs the atomic: the
// thread whose coordinates map to the first copy along every replicated dim, or thread 0 for a
// scalar pointer. Where the old values are used, owners hand them to the other copies through
// shared memory. Each access sits in a branch on (mask and owner): atomics are not vectorized.
#include <fmt/format.h>

#include "jit/lower/lowering.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
using ir::DType;
using ir::Op;
using ir::OpKind;
using I = std::int64_t;

namespace {

const std::string& string_attr(const Op& op, const char* name) {
  auto it = op.attrs.find(name);
  const auto* s = it == op.attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
  if (!s) throw InternalError(fmt::format("lowering: '{}' without attribute '{}' at {}", op.name(), name, op.loc.str()));
  return *s;
}

llvm::AtomicOrdering ordering(const Op& op) {
  const std::string& sem = string_attr(op, "sem");
  if (sem == "relaxed") return llvm::AtomicOrdering::Monotonic;
  if (sem == "acquire") return llvm::AtomicOrdering::Acquire;
  if (sem == "release") return llvm::AtomicOrdering::Release;
  if (sem == "acq_rel") return llvm::AtomicOrdering::AcquireRelease;
  throw InternalError(fmt::format("lowering: unknown memory semantics '{}' at {}", sem, op.loc.str()));
}

// cmpxchg's ordering when the comparison fails (no store happens): it cannot release.
llvm::AtomicOrdering failure_ordering(llvm::AtomicOrdering o) {
  if (o == llvm::AtomicOrdering::AcquireRelease) return llvm::AtomicOrdering::Acquire;
  if (o == llvm::AtomicOrdering::Release) return llvm::AtomicOrdering::Monotonic;
  return o;
}

llvm::AtomicRMWInst::BinOp rmw_op(const Op& op, DType d) {
  using B = llvm::AtomicRMWInst::BinOp;
  const std::string& k = string_attr(op, "op");
  const bool fp = ir::is_float(d), uns = ir::is_unsigned(d);
  if (k == "add") return fp ? B::FAdd : B::Add;
  // fmax/fmin: LLVM's maxnum semantics (a NaN operand yields the other), as ops.def says.
  if (k == "max") return fp ? B::FMax : uns ? B::UMax : B::Max;
  if (k == "min") return fp ? B::FMin : uns ? B::UMin : B::Min;
  if (k == "and" && !fp) return B::And;
  if (k == "or" && !fp) return B::Or;
  if (k == "xchg") return B::Xchg;
  throw InternalError(fmt::format("lowering: atomic '{}' on {} at {}", k, ir::dtype_name(d), op.loc.str()));
}

}  // namespace

llvm::Value* KernelLowering::owner_predicate(const ir::Type& t) {
  if (!t.is_tile()) return b_.CreateICmpEQ(tid_, b_.getInt32(0));
  // Along a dim d whose size S_d is below the CTA tile, thread t holds (base_d(t) + off) mod S_d
  // (layouts.hpp): the threads with base_d < S_d hold the first copy, the others repeat it.
  const auto dist = analysis::distribute(t);
  const auto& base = thread_base(t);
  llvm::Value* owner = nullptr;
  for (int d = 0; d < static_cast<int>(dist.shape.size()); ++d) {
    if (dist.shape[d] >= dist.cta_tile[d]) continue;
    llvm::Value* first = b_.CreateICmpULT(base[d], b_.getInt32(static_cast<std::uint32_t>(dist.shape[d])));
    owner = owner ? b_.CreateAnd(owner, first) : first;
  }
  return owner;
}

Elems KernelLowering::share_from_owners(const Op& op, const Elems& old, llvm::Value* owner) {
  // Owners write the old values at the elements' row-major indices (the masked-off ones are 0
  // already), then every thread reads its copies.
  const ir::Type& t = op.result()->type;
  llvm::Type* elem = scalar_type(t.element());
  auto linear_index = [&](I k) -> llvm::Value* { return t.is_tile() ? element_linear_index(t, k) : b_.getInt32(0); };
  shared_phase(op, 0);
  auto* write_bb = llvm::BasicBlock::Create(ctx_, "atomic.share", fn_);
  auto* join_bb = llvm::BasicBlock::Create(ctx_, "atomic.shared", fn_);
  b_.CreateCondBr(owner, write_bb, join_bb);
  b_.SetInsertPoint(write_bb);
  for (I k = 0; k < static_cast<I>(old.size()); ++k) b_.CreateStore(old[k], b_.CreateGEP(elem, scratch(op), linear_index(k)));
  b_.CreateBr(join_bb);
  b_.SetInsertPoint(join_bb);
  shared_phase(op, 1);
  Elems out;
  for (I k = 0; k < static_cast<I>(old.size()); ++k)
    out.push_back(b_.CreateLoad(elem, b_.CreateGEP(elem, scratch(op), linear_index(k))));
  return out;
}

void KernelLowering::lower_atomic(const Op& op) {
  const bool cas = op.kind == OpKind::AtomicCas;
  const ir::Type& rt = op.result()->type;
  const DType d = rt.dtype;
  llvm::Type* elem = scalar_type(rt.element());
  // The ordering is carried by fences around relaxed atomics: LLVM 22's NVPTX prints an atomicrmw
  // of any ordering as a plain (relaxed) `atom`, dropping acquire/release. A release fence before
  // and an acquire fence after give the PTX memory model's mapping of the requested semantics.
  const llvm::AtomicOrdering requested = ordering(op);
  const llvm::AtomicOrdering order = llvm::AtomicOrdering::Monotonic;
  const llvm::SyncScope::ID scope = ctx_.getOrInsertSyncScopeID(target_.sync_scope(string_attr(op, "scope")));
  const llvm::Align align(static_cast<std::uint64_t>(ir::dtype_bytes(d)));
  const Elems& ptrs = get(op.operands[0]);
  const Elems& vals = get(op.operands[cas ? 2 : 1]);
  const Elems* cmps = cas ? &get(op.operands[1]) : nullptr;
  const Elems* mask = !cas && op.operands.size() > 2 ? &get(op.operands[2]) : nullptr;
  llvm::Value* owner = owner_predicate(op.operands[0]->type);

  auto emit = [&](std::size_t s) -> llvm::Value* {
    if (!cas) return b_.CreateAtomicRMW(rmw_op(op, d), ptrs[s], vals[s], align, order, scope);
    // cmpxchg takes integers: floats go through their bit patterns (ops.def: bits compare).
    llvm::Type* bits = b_.getIntNTy(static_cast<unsigned>(ir::dtype_bits(d)));
    auto as_bits = [&](llvm::Value* v) { return ir::is_float(d) ? b_.CreateBitCast(v, bits) : v; };
    auto* x = b_.CreateAtomicCmpXchg(ptrs[s], as_bits((*cmps)[s]), as_bits(vals[s]), align, order,
                                     failure_ordering(order), scope);
    llvm::Value* o = b_.CreateExtractValue(x, 0);
    return ir::is_float(d) ? b_.CreateBitCast(o, elem) : o;
  };

  const bool release = requested == llvm::AtomicOrdering::Release || requested == llvm::AtomicOrdering::AcquireRelease;
  const bool acquire = requested == llvm::AtomicOrdering::Acquire || requested == llvm::AtomicOrdering::AcquireRelease;
  // Which threads access each element: its owner, where the mask holds (null: all).
  Elems preds(ptrs.size(), nullptr);
  for (std::size_t s = 0; s < ptrs.size(); ++s) {
    preds[s] = owner;
    if (mask) preds[s] = owner ? b_.CreateAnd(owner, (*mask)[s]) : (*mask)[s];
  }
  check_bounds(op, "atomic", op.operands[0]->type, ptrs, owner || mask ? &preds : nullptr, ir::dtype_bytes(d));
  if (release) b_.CreateFence(llvm::AtomicOrdering::Release, scope);
  Elems old(ptrs.size());
  for (std::size_t s = 0; s < ptrs.size(); ++s) {
    llvm::Value* pred = preds[s];
    if (!pred) {
      old[s] = emit(s);
      continue;
    }
    llvm::BasicBlock* from = b_.GetInsertBlock();
    auto* then_bb = llvm::BasicBlock::Create(ctx_, "atomic", fn_);
    auto* join_bb = llvm::BasicBlock::Create(ctx_, "atomic.join", fn_);
    b_.CreateCondBr(pred, then_bb, join_bb);
    b_.SetInsertPoint(then_bb);
    llvm::Value* v = emit(s);
    llvm::BasicBlock* then_end = b_.GetInsertBlock();
    b_.CreateBr(join_bb);
    b_.SetInsertPoint(join_bb);
    llvm::PHINode* phi = b_.CreatePHI(elem, 2);
    phi->addIncoming(v, then_end);
    phi->addIncoming(llvm::Constant::getNullValue(elem), from);  // masked off: 0 (ops.def)
    old[s] = phi;
  }
  if (acquire) b_.CreateFence(llvm::AtomicOrdering::Acquire, scope);
  // The plan gives the op a region exactly when it has replicas and its old values are used.
  if (owner && smem_plan_->has_region(op)) old = share_from_owners(op, old, owner);
  set(op.result(), std::move(old));
}

}  // namespace tessera::lower

// Shared-memory ops (ops.def "Shared memory") as the pipeline pass emits them: a buffer is its
// region of the kernel's shared memory (the plan's, analysis::SharedMemoryPlan), a view a pointer
// to one stage, laid out as the type's encoding says (shared_tile); async_copy is cp.async, its
// commit and wait the group instructions, local_store and local_load plain shared stores and loads
// of each thread's elements (vectors along contiguous rows). Every barrier between them is in the
// IR (the place-barriers pass); none is added here.
#include <fmt/format.h>

#include <algorithm>

#include "jit/lower/lowering.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
using ir::Op;
using ir::OpKind;
using I = std::int64_t;

namespace {

// Shared buffers the lowering lays out: stages of 1-D or 2-D tiles, or one 2-D tile.
void check_compiled_rank(const Op& op, const ir::Type& buffer) {
  if (buffer.rank() != 3 && buffer.rank() != 2)
    throw ProgramError(fmt::format("'{}' at {}: a shared buffer of {} dim(s) ({}) is not compiled yet (stages of 1-D or 2-D "
                                   "tiles, or one 2-D tile, are)",
                                   op.name(), op.loc.str(), buffer.rank(), ir::to_string(buffer)));
}

// Whether a debug_barrier lies between `op` and the last async_wait before it in its block: the
// order in which the copies another thread waited for become visible to this one.
bool barrier_since_wait(const Op& op) {
  const auto& ops = op.parent->ops;
  auto it = std::find_if(ops.rbegin(), ops.rend(), [&](const auto& o) { return o.get() == &op; });
  bool barrier = false;
  for (++it; it != ops.rend(); ++it) {
    if ((*it)->kind == OpKind::AsyncWait) return barrier;
    barrier = barrier || (*it)->kind == OpKind::DebugBarrier;
  }
  return false;
}

// A 1-D tile (a row a persistent loop copies into a ring) as the 2-D tile [1, N] its bytes are:
// the same elements in the same slots (a blocked layout with one row of threads), so that the
// 2-D shared-tile arithmetic serves both. A 2-D tile as it is.
ir::Type as_2d(const Op& op, const ir::Type& t) {
  if (t.rank() != 1) return t;
  const ir::Layout& l = t.layout;
  if (l.kind != ir::Layout::Kind::Blocked)
    throw ProgramError(fmt::format("'{}' at {}: a 1-D tile of {} in shared memory is not compiled yet (blocked layouts are)",
                                   op.name(), op.loc.str(), ir::to_string(t)));
  ir::Type row = t;
  row.shape = {1, t.shape[0]};
  row.layout.size_per_thread = {1, l.size_per_thread[0]};
  row.layout.threads_per_warp = {1, l.threads_per_warp[0]};
  row.layout.warps_per_cta = {1, l.warps_per_cta[0]};
  row.layout.order = {1, 0};
  if (!l.lane_repeat.empty()) row.layout.lane_repeat = {1, l.lane_repeat[0]};
  return row;
}

// The conjuncts of an i1 value: the leaves of its tree of `and`s, without repeats or constant trues.
void collect_conjuncts(llvm::Value* v, std::vector<llvm::Value*>& out) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(v); c && c->isOne()) return;
  if (auto* a = llvm::dyn_cast<llvm::BinaryOperator>(v); a && a->getOpcode() == llvm::Instruction::And) {
    collect_conjuncts(a->getOperand(0), out);
    collect_conjuncts(a->getOperand(1), out);
    return;
  }
  if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
}

// The predicates of one op's copies rebuilt as (the conjunction all of them share, one value) and
// (each copy's own rest): a K loop's copies of A share the K mask and the pipeline's in-range test,
// and each has its row's mask. Built as they come, each copy's one-use a & b & c is a chain of its
// own: with cp.async's source size that was a chain of selects per copy (a 128x256x64 matmul's K
// loop: 25 selp for 12 copies, 16 after; +1% at num_stages 3, +5% at 4 on an H100, session 29);
// with the ignore-src predicate the shared value still saves SASS (that kernel on sm_90a: 848
// instructions against 888, ptxas 13.0, session 30).
std::vector<llvm::Value*> share_common_conjuncts(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& preds) {
  std::vector<std::vector<llvm::Value*>> conjuncts(preds.size());
  for (std::size_t i = 0; i < preds.size(); ++i) collect_conjuncts(preds[i], conjuncts[i]);
  auto in = [](const std::vector<llvm::Value*>& set, llvm::Value* v) { return std::find(set.begin(), set.end(), v) != set.end(); };
  std::vector<llvm::Value*> common;
  if (!conjuncts.empty())
    for (llvm::Value* v : conjuncts[0])
      if (std::all_of(conjuncts.begin(), conjuncts.end(), [&](const auto& c) { return in(c, v); })) common.push_back(v);
  auto all = [&](const std::vector<llvm::Value*>& vs) {
    llvm::Value* r = b.getTrue();
    for (llvm::Value* v : vs) r = r == b.getTrue() ? v : b.CreateAnd(r, v);
    return r;
  };
  llvm::Value* shared = all(common);
  std::vector<llvm::Value*> out;
  for (const auto& c : conjuncts) {
    std::vector<llvm::Value*> rest;
    for (llvm::Value* v : c)
      if (!in(common, v)) rest.push_back(v);
    out.push_back(b.CreateAnd(shared, all(rest)));
  }
  return out;
}

}  // namespace

// A view local_store and local_load can move: one stage of 2-D tiles (local_load: or 1-D), of
// elements wider than a bit. local_load may read a ring where a debug_barrier follows the
// async_wait before it, which orders the copies (the pipeline pass reads a row loop's rings back
// so; the layout pass loads a transposed view right before the dot that reads it:
// shared_encodings.hpp). local_store may not write a ring (its barriers against the copies would
// have to follow the waits).
void KernelLowering::check_compiled_view(const Op& op) const {
  const ir::Type& view = op.operands[0]->type;
  const bool rank_ok = view.rank() == 2 || (view.rank() == 1 && op.kind == OpKind::LocalLoad);
  if (!rank_ok || view.dtype == ir::DType::I1)
    throw ProgramError(fmt::format("'{}' at {}: a view of {} is not compiled yet (one stage of 2-D tiles of bytes or wider is; "
                                   "local_load also reads 1-D ones)",
                                   op.name(), op.loc.str(), ir::to_string(view)));
  if (!smem_plan_->is_ring(*analysis::shared_buffer_of(op.operands[0]))) return;
  if (op.kind == OpKind::LocalStore)
    throw ProgramError(fmt::format("'{}' at {}: a buffer that async_copy also fills is not compiled yet (its barriers would "
                                   "have to follow the copies' waits)",
                                   op.name(), op.loc.str()));
  if (!barrier_since_wait(op))
    throw ProgramError(fmt::format("'{}' at {}: reads a buffer that async_copy fills with no debug_barrier between the "
                                   "async_wait before it and it (other threads' copies would not be visible)",
                                   op.name(), op.loc.str()));
}

KernelLowering::SharedTile KernelLowering::shared_tile(const ir::Type& view) const {
  SharedTile s;
  s.rows = view.rank() == 1 ? 1 : view.shape.at(0);  // a 1-D view: one row (as_2d)
  s.cols = view.shape.back();
  s.esz = ir::dtype_bytes(view.dtype);
  switch (view.encoding.kind) {
    case ir::SharedEncoding::Kind::Nvmma:
      s.swizzle = view.encoding.bytes;
      s.contiguous_dim = view.encoding.transposed ? 0 : 1;
      break;
    case ir::SharedEncoding::Kind::Padded:
    case ir::SharedEncoding::Kind::RowMajor: {
      // A transposed view (smem_trans) reads rows that run along its dim 0.
      const I pad = view.encoding.kind == ir::SharedEncoding::Kind::Padded ? view.encoding.bytes / s.esz : 0;
      s.contiguous_dim = view.encoding.transposed ? 0 : 1;
      s.row_stride = (view.encoding.transposed ? s.rows : s.cols) + pad;
      break;
    }
  }
  return s;
}

void KernelLowering::lower_shared_memory_op(const Op& op) {
  switch (op.kind) {
    case OpKind::LocalAlloc:
      check_compiled_rank(op, op.result()->type);
      set(op.result(), {scratch(op)});
      return;
    case OpKind::SmemIndex: {  // stage slot mod stages (ops.def)
      const ir::Type& buffer = op.operands[0]->type;
      check_compiled_rank(op, buffer);
      llvm::Value* stage = b_.CreateURem(get(op.operands[1])[0], i32(b_, buffer.shape[0]));
      llvm::Value* offset = b_.CreateMul(stage, i32(b_, analysis::shared_stage_bytes(op.result()->type)));
      set(op.result(), {b_.CreateGEP(b_.getInt8Ty(), get(op.operands[0])[0], offset)});
      return;
    }
    case OpKind::SmemTrans: set(op.result(), get(op.operands[0])); return;  // the same bytes (its type says how to read them)
    case OpKind::AsyncCopy: return lower_async_copy(op);
    case OpKind::LocalStore: return lower_local_store(op);
    case OpKind::LocalLoad: return lower_local_load(op);
    case OpKind::AsyncCommit: target_.async_commit(b_); return;
    case OpKind::AsyncWait: {
      const I pending = op.int_attr("pending");
      if (pending > 255) throw ProgramError(fmt::format("async_wait at {}: pending = {}, more groups than are ever in flight", op.loc.str(), pending));
      target_.async_wait(b_, static_cast<int>(pending));
      return;
    }
    case OpKind::FenceAsyncShared: target_.fence_proxy_async(b_); return;
    default:
      throw ProgramError(fmt::format("'{}' at {}: not compiled yet (only the interpreter runs it; no pass emits it)",
                                     op.name(), op.loc.str()));
  }
}

void KernelLowering::lower_local_store(const Op& op) {
  const ir::Value* view = op.operands[0];
  const ir::Value* value = op.operands[1];
  check_compiled_view(op);
  llvm::Value* base = get(view)[0];
  // Where the layout repeats the tile over threads, only the first copy's threads write: two
  // unordered writes of one address are a race to compute-sanitizer even with equal bytes.
  only_where(owner_predicate(value->type), [&] { stage_in_shared(value, base, shared_tile(view->type)); });
}

void KernelLowering::lower_local_load(const Op& op) {
  const ir::Value* view = op.operands[0];
  check_compiled_view(op);
  set(op.result(), load_from_shared(as_2d(op, op.result()->type), get(view)[0], shared_tile(view->type)));
}

void KernelLowering::lower_async_copy(const Op& op) {
  const ir::Value* view = op.operands[0];
  const ir::Value* ptr_v = op.operands[1];
  const ir::Value* mask_v = op.operands.size() > 2 ? op.operands[2] : nullptr;
  if (view->type.rank() != 2 && view->type.rank() != 1)
    throw ProgramError(fmt::format("async_copy at {}: into {} (a view must be one stage of 1-D or 2-D tiles to be compiled)",
                                   op.loc.str(), ir::to_string(view->type)));
  llvm::Value* base = get(view)[0];
  const ir::Type& t = ptr_v->type;  // the tile copied: its shape and layout, pointers to its elements
  const ir::Type t2 = as_2d(op, t);  // (its slots, in two dims)
  const I esz = ir::dtype_bytes(t.pointee);
  const SharedTile tile = shared_tile(view->type);
  llvm::Type* elem = scalar_type(ir::Type::scalar(t.pointee));
  const Elems& ptrs = get(ptr_v);
  const Elems* mask = mask_v ? &get(mask_v) : nullptr;
  auto pred = [&](I k) { return mask ? (*mask)[static_cast<std::size_t>(k)] : b_.getTrue(); };
  std::function<llvm::Value*(I)> offset_of;  // made in the copying block, where its first offset is used
  auto shared_at = [&](I k) { return b_.CreateGEP(b_.getInt8Ty(), base, offset_of(k)); };
  // Where the layout repeats the tile over threads, only the first copy's threads copy: two
  // asynchronous writes of one address are a race (compute-sanitizer's racecheck reports it), even
  // with the same bytes, and a repeat must not zero-fill either.
  llvm::BasicBlock* copied = nullptr;
  if (llvm::Value* owner = owner_predicate(t)) {
    auto* copy_bb = llvm::BasicBlock::Create(ctx_, "async.copy", fn_);
    copied = llvm::BasicBlock::Create(ctx_, "async.copied", fn_);
    b_.CreateCondBr(owner, copy_bb, copied);
    b_.SetInsertPoint(copy_bb);
  }
  // A group is a run of elements contiguous in global memory along the layout's fastest dim. Only
  // runs along the dim the buffer stores contiguously are one copy (padded rows: dim 1; wgmma's
  // operands: their encoding's); others (a transposed A, vectorized along M, into padded rows) are
  // scattered element by element.
  const auto layout_dist = analysis::distribute(t2);
  const bool runs_along_rows = layout_dist.slice_dim < 0 && layout_dist.layout.order[0] == tile.contiguous_dim;
  const auto groups = access_groups(ptr_v, mask_v);
  auto one_copy = [&](const std::vector<I>& g) {
    const I bytes = static_cast<I>(g.size()) * esz;
    return runs_along_rows && (bytes == 4 || bytes == 8 || bytes == 16);
  };
  std::vector<I> slots;  // the elements whose shared addresses the copies below take
  for (const auto& g : groups) {
    if (one_copy(g)) slots.push_back(g[0]);
    else slots.insert(slots.end(), g.begin(), g.end());
  }
  offset_of = shared_element_offsets(t2, tile, slots);
  check_bounds(op, "load", t, ptrs, mask, esz);
  std::vector<llvm::Value*> copy_preds;
  for (const auto& g : groups)
    if (one_copy(g)) copy_preds.push_back(pred(g[0]));
  copy_preds = share_common_conjuncts(b_, copy_preds);
  std::size_t copy_index = 0;
  for (const auto& g : groups) {
    const I bytes = static_cast<I>(g.size()) * esz;
    if (one_copy(g)) {
      target_.async_copy(b_, shared_at(g[0]), ptrs[static_cast<std::size_t>(g[0])], static_cast<int>(bytes),
                         copy_preds[copy_index++]);
      continue;
    }
    for (I k : g) {  // narrower than cp.async copies: an ordinary load and store (zero where masked)
      llvm::Value* v = target_.predicated_load(b_, elem, ptrs[static_cast<std::size_t>(k)], pred(k),
                                               llvm::Constant::getNullValue(elem), static_cast<unsigned>(esz));
      b_.CreateStore(v, shared_at(k));
    }
  }
  if (copied) {
    b_.CreateBr(copied);
    b_.SetInsertPoint(copied);
  }
}

}  // namespace tessera::lower
